"""Converted records as Arrow tables of rows, with the Kafka metadata columns a table asks for.

Values with a schema (struct) give one table per run of records sharing a schema; schemaless JSON is inferred
with the rules of `format.json_inference` (every value must be a JSON object), split where fields conflict;
StringConverter and ByteArrayConverter values are one column `value`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa

from sink_engine.convert.arrow_types import struct_table
from sink_engine.errors import FormatError
from sink_engine.format.json_inference import block_schema, needs_python, read_block, rows_in_python
from sink_engine.records import RecordChunk, ValueColumn
from sink_engine.target.iceberg_tables.spec import (
    KEY_COLUMN,
    OFFSET_COLUMN,
    PARTITION_COLUMN,
    RECORD_TIME_COLUMN,
    TIMESTAMP_COLUMN,
    TOPIC_COLUMN,
)

RecordTimes = Callable[[RecordChunk, ValueColumn], list]  # epoch ms of each record (a timestamp extractor's)


def _record_times(chunk: RecordChunk, values: ValueColumn, times: RecordTimes | None) -> pa.Array:
    assert times is not None  # given with the column (IcebergSettings.timestamp_field)
    return pa.array(times(chunk, values), pa.timestamp("ms", tz="UTC"))


_EXTRA: dict[str, Callable[[RecordChunk, ValueColumn, RecordTimes | None], pa.Array]] = {
    TOPIC_COLUMN: lambda chunk, values, times: pa.array([chunk.topic] * len(chunk), pa.string()),
    PARTITION_COLUMN: lambda chunk, values, times: pa.array([chunk.partition] * len(chunk), pa.int32()),
    OFFSET_COLUMN: lambda chunk, values, times: pa.array(chunk.offsets, pa.int64()),
    TIMESTAMP_COLUMN: lambda chunk, values, times: pa.array(chunk.timestamps, pa.timestamp("ms", tz="UTC")),
    KEY_COLUMN: lambda chunk, values, times: pa.array(chunk.keys, pa.binary()),
    RECORD_TIME_COLUMN: _record_times,
}


def record_tables(
    chunk: RecordChunk, values: ValueColumn, extra: tuple[str, ...] = (), record_times: RecordTimes | None = None
) -> Iterator[tuple[int, int, pa.Table]]:
    """(start, stop, table): the rows of records [start, stop) of the chunk, in order, each table of one schema,
    with the `extra` columns (Kafka metadata, `_record_timestamp` from `record_times`) after the value's. Raises
    FormatError naming a schemaless JSON value that is not an object, and the extractor's error naming a record
    whose time cannot be read."""
    pieces = (
        _json_tables(chunk, values, 0, len(values))
        if values.kind == "json"
        else ((start, stop, _value_table(values, start, stop)) for start, stop in _runs(values))
    )
    for start, stop, table in pieces:
        whole = (start, stop) == (0, len(chunk))
        part, part_values = (chunk, values) if whole else (chunk.slice(start, stop), values.slice(start, stop))
        for name in extra:
            table = table.append_column(name, _EXTRA[name](part, part_values, record_times))
        yield start, stop, table


def _runs(values: ValueColumn) -> Iterator[tuple[int, int]]:
    if values.kind != "struct":
        yield 0, len(values)
        return
    start, schemas = 0, values.schemas
    assert schemas is not None  # a struct column's
    for i in range(1, len(values)):
        if schemas[i] is not schemas[start] and schemas[i] != schemas[start]:
            yield start, i
            start = i
    yield start, len(values)


def _value_table(values: ValueColumn, start: int, stop: int) -> pa.Table:
    part = values if (start, stop) == (0, len(values)) else values.slice(start, stop)
    if part.kind == "struct":
        return struct_table(part)
    return pa.table({"value": pa.array(part.items, pa.string() if part.kind == "string" else pa.binary())})


def _json_tables(chunk: RecordChunk, values: ValueColumn, start: int, stop: int) -> Iterator[tuple[int, int, pa.Table]]:
    """Schemaless JSON inferred by `format.json_inference`'s rules, except that records whose fields conflict
    (a number and a string, ...) are split until they do not, rather than made JSON text: a record's row is then
    the same however records were read together (a single record with an object empty everywhere keeps the
    rules' JSON text)."""
    items = values.items[start:stop]
    for position, item in enumerate(items):
        if item[:1] != b"{":
            raise FormatError(
                chunk.topic,
                chunk.partition,
                chunk.offsets[start + position],
                "an Iceberg row of schemaless JSON needs a JSON object value",
            )
    text = b"\n".join(items)
    table, schema = block_schema(text)
    if schema is not None and not needs_python(schema):
        yield start, stop, table if table.schema == schema else read_block(text, schema)
    elif stop - start == 1:
        yield (
            start,
            stop,
            rows_in_python(
                text,
                lambda position, cause: FormatError(
                    chunk.topic, chunk.partition, chunk.offsets[start + position], cause
                ),
            )[0],
        )
    else:
        middle = (start + stop) // 2
        yield from _json_tables(chunk, values, start, middle)
        yield from _json_tables(chunk, values, middle, stop)
