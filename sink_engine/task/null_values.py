"""`behavior.on.null.values`, decided here only, for a null value read from Kafka (a tombstone) as for a value
the converter read as null or the transforms made null (`null_value`):

- `ignore`: the record is settled without output (a commit counts it as ignored);
- `fail`: a bad record, NullValueError (stage TASK_PUT), which takes the one bad-record path
  (task/bad_records.py): the dead-letter router tolerates it or the task stops on it;
- `write`: a tombstone, kept in its place in offset order, goes to files under `tombstone.encoded.partition`
  (writer.write_tombstones), as in the Confluent connector; the value file there holds one JSON `null` each;
- `keep` (EnvelopeFormat, never with transforms): a value like any other, for the converter.

A record the transforms drop (a filter, a predicate) is settled by TransformStep (task/transforms.py), which
returns its offset so that the commit counts it as dropped.
"""

from __future__ import annotations

from sink_engine.dlq.letter import STAGE_TASK_PUT
from sink_engine.dlq.router import qualified_name
from sink_engine.errors import NullValueError
from sink_engine.records import RecordChunk
from sink_engine.task.bad_records import StepFailed

VALUE, TOMBSTONE = "value", "tombstone"


TOMBSTONE_READ, AFTER_TRANSFORMS, CONVERTED = "(tombstone)", "after transforms", "(the converter read a null value)"


def null_value(behavior: str, chunk: RecordChunk, position: int, where: str = TOMBSTONE_READ) -> str | None:
    """What becomes of the record at `position` of `chunk`, whose value is null: read from Kafka (TOMBSTONE_READ),
    made null by the transforms (AFTER_TRANSFORMS), or read as null by the converter from a non-null Kafka value
    (CONVERTED: the JSON `null`, an envelope's null payload, an Avro null, as Connect's converters give a null value).
    Returns VALUE, TOMBSTONE, or None when it is settled without output. Raises StepFailed for `fail`."""
    if behavior == "keep":
        return VALUE
    if behavior == "write":
        return TOMBSTONE
    if behavior == "fail":
        error = NullValueError(
            chunk.topic,
            chunk.partition,
            chunk.offsets[position],
            f"null value {where} with behavior.on.null.values=fail",
        )
        raise StepFailed(error, STAGE_TASK_PUT, qualified_name(null_value))
    return None


def null_runs(chunk: RecordChunk, behavior: str) -> list[tuple[RecordChunk, bool]]:
    """The records of a chunk read from Kafka that are kept (`null_value`), in offset order, cut into runs each
    with True when its records are tombstones; none for an empty chunk. Raises StepFailed at the first null value
    with `fail`."""
    if None not in chunk.values:
        return [(chunk, False)] if len(chunk) else []
    runs: list[tuple[RecordChunk, bool]] = []
    positions: list[int] = []
    run_kind = None
    for position, value in enumerate(chunk.values):
        kind = VALUE if value is not None else null_value(behavior, chunk, position)
        if kind is None:
            continue
        if positions and kind != run_kind:
            runs.append((_select(chunk, positions), run_kind == TOMBSTONE))
            positions = []
        positions.append(position)
        run_kind = kind
    if positions:
        runs.append((_select(chunk, positions), run_kind == TOMBSTONE))
    return runs


def _select(chunk: RecordChunk, positions: list[int]) -> RecordChunk:
    if len(positions) == len(chunk):
        return chunk
    if positions[-1] - positions[0] + 1 == len(positions):
        return chunk.slice(positions[0], positions[-1] + 1)
    return chunk.select(positions)


def converted_runs(chunk: RecordChunk, nulls: list[int], behavior: str) -> list[tuple[list[int], str]]:
    """The positions of a converted chunk in offset order, cut into runs of VALUE and TOMBSTONE records, `nulls`
    the positions the converter read as null (`null_value` CONVERTED: those ignored are left out). Raises
    StepFailed at the first null with `fail`."""
    runs: list[tuple[list[int], str]] = []
    null_set = set(nulls)
    for position in range(len(chunk)):
        kind = VALUE if position not in null_set else null_value(behavior, chunk, position, CONVERTED)
        if kind is None:
            continue
        if runs and runs[-1][1] == kind:
            runs[-1][0].append(position)
        else:
            runs.append(([position], kind))
    return runs
