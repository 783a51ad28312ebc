"""The one path of a bad record: a record a step (conversion, transforms, partitioning, null values) or the writer's
output fails is classified here (`classified`), then `write_around` writes the records before it, hands it to the
dead-letter router, and carries on after it when the router tolerates it (`errors.tolerance`), else its error
propagates (everything before it can still be committed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sink_engine.dlq.router import DeadLetterRouter, qualified_name
from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk

T = TypeVar("T")


class StepFailed(Exception):
    """A step failed a record: its error, the Kafka Connect stage and the step's name for the dead letter; `resume`
    the position (in the records `write_around` handles) of the first record before it not written yet, when
    some of those the attempt took were written before it failed (None: none was)."""

    def __init__(self, error: RecordError, stage: str, executing_class: str, resume: int | None = None):
        self.error, self.stage, self.executing_class, self.resume = error, stage, executing_class, resume


def classified(error: RecordError, error_class: type[RecordError]) -> RecordError:
    """The error as the class of the step that raised it: a bare RecordError becomes `error_class` (same record,
    cause and traceback); a subclass names its own class and stays as it is."""
    if type(error) is not RecordError:
        return error
    return error_class(error.topic, error.partition, error.offset, error.cause).with_traceback(error.__traceback__)


def run_step(step: Callable[[], T], error_class: type[RecordError], stage: str, owner: object) -> T:
    """`step()`, its RecordError `classified` and raised as StepFailed at `stage`, named after `owner`."""
    try:
        return step()
    except RecordError as e:
        raise StepFailed(classified(e, error_class), stage, qualified_name(owner)) from None


def write_around(
    records: RecordChunk,
    attempt: Callable[[int, int], None],
    router: DeadLetterRouter,
    retry_piece: int | None = None,
    start: int = 0,
    stop: int | None = None,
) -> None:
    """Handle records[start:stop] with `attempt(start, stop)`, which raises StepFailed at a bad record. The records
    before a bad one are handled first (again by `write_around`), then the router takes it; the ones after it
    follow if the router tolerates it, else its RecordError propagates. After a bad record, `retry_piece` records
    are tried at once, doubling after each clean piece (many bad records then cost no more than a few); without
    it, the rest at once."""
    stop = len(records) if stop is None else stop
    position, size = start, stop - start
    while position < stop:
        end = min(stop, position + size)
        try:
            attempt(position, end)
        except StepFailed as failed:
            bad = records.offsets.index(failed.error.offset, position, end)
            resume = position if failed.resume is None else max(position, failed.resume)
            if resume < bad:
                write_around(records, attempt, router, retry_piece, resume, bad)
            router.report(records, bad, failed.error, failed.stage, failed.executing_class)
            if not router.tolerates:
                raise failed.error from None
            position, size = bad + 1, retry_piece or stop
            continue
        position, size = end, size * 2
