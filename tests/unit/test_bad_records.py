"""The one bad-record path (task/bad_records.py): the records before a bad one are written once, in order, the
router takes the bad one, the rest follows when tolerated; a bare RecordError is classified by its step."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConversionError, RecordError, SchemaProjectionError
from sink_engine.records import RecordChunk
from sink_engine.task.bad_records import StepFailed, classified, write_around


class Router:
    def __init__(self, tolerates: bool):
        self.tolerates, self.reported = tolerates, []

    def report(self, chunk, position, error, stage, executing_class):
        self.reported.append((chunk.offsets[position], type(error).__name__, stage))


def chunk(count: int) -> RecordChunk:
    return RecordChunk(
        "t", 0, list(range(100, 100 + count)), [b"v"] * count, keys=[None] * count, timestamps=[0] * count
    )


@pytest.mark.parametrize("partial", [False, True])  # an attempt that writes nothing, or up to the bad record
def test_the_records_around_bad_ones_are_written_once_in_order(partial):
    records, bad, written = chunk(300), {102, 150, 151, 299}, []

    def attempt(start, stop):
        for position in range(start, stop):
            if records.offsets[position] in bad:
                if not partial:
                    del written[len(written) - (position - start) :]
                error = RecordError("t", 0, records.offsets[position], "bad")
                raise StepFailed(
                    classified(error, ConversionError), "VALUE_CONVERTER", "c", position if partial else None
                )
            written.append(records.offsets[position])

    router = Router(tolerates=True)
    write_around(records, attempt, router, retry_piece=4)
    assert written == [offset for offset in records.offsets if offset not in bad]
    assert router.reported == [(offset, "ConversionError", "VALUE_CONVERTER") for offset in sorted(bad)]


def test_an_untolerated_bad_record_stops_after_the_records_before_it():
    records, written = chunk(10), []

    def attempt(start, stop):
        for position in range(start, stop):
            if position == 4:
                raise StepFailed(SchemaProjectionError("t", 0, 104, "no"), "TASK_PUT", "w", position)
            written.append(position)

    router = Router(tolerates=False)
    with pytest.raises(SchemaProjectionError):
        write_around(records, attempt, router)
    assert written == [0, 1, 2, 3] and router.reported == [(104, "SchemaProjectionError", "TASK_PUT")]


def test_a_bare_record_error_takes_its_steps_class_and_a_subclass_keeps_its_own():
    bare, typed = RecordError("t", 0, 7, "x"), SchemaProjectionError("t", 0, 7, "y")
    assert type(classified(bare, ConversionError)) is ConversionError and classified(bare, ConversionError).offset == 7
    assert classified(typed, ConversionError) is typed
