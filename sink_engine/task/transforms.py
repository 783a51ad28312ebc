"""The transform step of a task (`transforms`): between value conversion and partitioning.

A chunk's records become TransformRecords (values converted by value.converter, tombstones as null values; keys
converted by key.converter when a transform or the keys sidecar needs them, else Kafka's bytes; headers as Kafka
gave them), go through the chain, and what comes out is rebuilt into value columns (`column`). A null value then
follows `behavior.on.null.values` as a tombstone read from Kafka does (task/null_values.py `null_value`: ignore,
fail or tombstone files); a record the chain dropped is settled here and its offset returned, to be counted. The
survivors keep their source offsets (and their Kafka key, value and headers, which dead letters carry). With
routers, each record's encoded partition is the pair (routed topic, encoded partition): the writer opens files per
routed topic.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import orjson

from sink_engine.convert.base import Converter
from sink_engine.convert.connect_json import Decoder, compile_decoder, dumps_non_finite_as_text, to_json
from sink_engine.convert.schema import Schema
from sink_engine.dlq.letter import STAGE_KEY_CONVERTER, STAGE_TASK_PUT, STAGE_TRANSFORMATION, STAGE_VALUE_CONVERTER
from sink_engine.dlq.router import qualified_name
from sink_engine.errors import ConversionError, PartitioningError, TransformationError
from sink_engine.partition.base import Partitioner
from sink_engine.records import Partitions, PreparedRecords, RecordChunk, Tombstones, Transformed, ValueColumn
from sink_engine.task.bad_records import StepFailed, run_step
from sink_engine.task.null_values import AFTER_TRANSFORMS, null_value
from sink_engine.transform.chain import TransformChain
from sink_engine.transform.record import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE, Header, TransformRecord

if TYPE_CHECKING:
    from sink_engine.task.sidecars import Sidecars

_TIMESTAMP_TYPES = {0: NO_TIMESTAMP_TYPE, 1: CREATE_TIME, 2: LOG_APPEND_TIME}


class TransformStep:
    """Runs the chain on the chunks of one topic-partition (RecordSteps.prepare with a chain)."""

    def __init__(
        self,
        chain: TransformChain,
        converter: Converter,
        key_converter: Converter | None,
        sidecars: Sidecars,
        null_behavior: str,
    ) -> None:
        """`converter` the value converter; `key_converter` None when keys stay Kafka's bytes; `sidecars` the
        task's Sidecars (their columns are built from the transformed keys and headers)."""
        self._chain, self._converter, self._key_converter = chain, converter, key_converter
        self._sidecars, self._null_behavior = sidecars, null_behavior

    def prepare(self, chunk: RecordChunk, partitioner: Partitioner) -> Transformed:
        """The chunk's parts to write and the offsets it dropped. Raises StepFailed for the first bad record."""
        values, value_kind = _converted(chunk, chunk.values, self._converter, STAGE_VALUE_CONVERTER)
        keys, key_kind = (
            _converted(chunk, chunk.keys, self._key_converter, STAGE_KEY_CONVERTER)
            if self._key_converter is not None
            else ([(key, None, None) for key in chunk.keys], None)
        )
        out, positions, kinds, texts = [], [], [], []
        dropped: list[int] = []
        for position, read in enumerate(_records(chunk, values, keys)):
            try:
                record = self._chain.apply(read)
            except TransformationError as e:
                raise StepFailed(e, STAGE_TRANSFORMATION, e.executing_class) from None
            if record is None:
                dropped.append(chunk.offsets[position])
                continue
            try:
                kind = _kind(record, value_kind)
            except TransformationError as e:
                raise StepFailed(e, STAGE_TRANSFORMATION, qualified_name(column)) from None
            if kind is None and null_value(self._null_behavior, chunk, position, AFTER_TRANSFORMS) is None:
                continue  # settled like a tombstone read from Kafka (task/null_values.py)
            out.append(record)
            positions.append(position)
            kinds.append(kind)
            document, text = values[position][0], values[position][2]
            texts.append(text if text is not None and record.value is document else None)
        parts: list[PreparedRecords | Tombstones] = []
        start = 0
        for stop in range(1, len(out) + 1):
            if stop < len(out) and kinds[stop] == kinds[start]:
                continue
            run = chunk.select(positions[start:stop])
            routed = [r.topic for r in out[start:stop]] if self._chain.has_routers else None
            kind = kinds[start]
            if kind is None:
                parts.append(Tombstones(run, routed, self._tombstone_sidecars(run, out[start:stop], key_kind)))
            else:
                parts.append(
                    self._prepared(run, out[start:stop], kind, texts[start:stop], key_kind, partitioner, routed)
                )
            start = stop
        return Transformed(parts, dropped)

    def _tombstone_sidecars(self, run: RecordChunk, records: list, key_kind: str | None) -> dict | None:
        """The keys and headers of tombstones after the chain, when they are stored."""
        if not self._sidecars.formats:
            return None
        return run_step(
            lambda: self._sidecars.transformed_columns(run, records, key_kind),
            ConversionError,
            STAGE_VALUE_CONVERTER,
            self._sidecars,
        )

    def _prepared(
        self,
        run: RecordChunk,
        records: list,
        kind: str,
        texts: list,
        key_kind: str | None,
        partitioner: Partitioner,
        routed: list | None,
    ) -> PreparedRecords:
        values = run_step(lambda: column(records, kind, texts), TransformationError, STAGE_TRANSFORMATION, column)
        if self._sidecars.formats:  # a null key or no headers: a bad record, as without transforms
            values = values.with_sidecars(
                run_step(
                    lambda: self._sidecars.transformed_columns(run, records, key_kind),
                    ConversionError,
                    STAGE_VALUE_CONVERTER,
                    self._sidecars,
                )
            )
        partitions = run_step(lambda: partitioner.encode(run, values), PartitioningError, STAGE_TASK_PUT, partitioner)
        if routed is not None:
            paths = cast(list[str], partitions.as_list(len(run)))  # the partitioner's, not routed yet
            partitions = Partitions.per_record(list(zip(routed, paths)))
        return PreparedRecords(run, values, partitions)


def _converted(chunk: RecordChunk, items: list, converter: Converter, stage: str) -> tuple[list, str | None]:
    """Each item converted as (value, schema, JSON text or None), (None, None, None) for a null item; and the
    column's kind (None when every item is null)."""
    present = [i for i, item in enumerate(items) if item is not None]
    converted: list = [(None, None, None)] * len(items)
    if not present:
        return converted, None
    part = (
        chunk
        if items is chunk.values
        else RecordChunk(
            chunk.topic, chunk.partition, chunk.offsets, items, keys=chunk.keys, timestamps=chunk.timestamps
        )
    )
    if len(present) < len(items):
        part = part.select(present)
    column_ = run_step(lambda: converter.convert(part), ConversionError, stage, converter)
    documents = column_.documents()
    schemas = column_.schemas if column_.schemas is not None else [None] * len(present)
    if column_.kind == "json" and column_.schemas is not None:  # values of a schema, as Connect JSON: read back
        documents = [_decoder(s)(d, "") for d, s in zip(documents, schemas)]
    texts = column_.items if column_.kind == "json" else [None] * len(present)
    for j, i in enumerate(present):
        converted[i] = (documents[j], schemas[j], texts[j])
    return converted, column_.kind


def _records(chunk: RecordChunk, values: list, keys: list) -> list[TransformRecord]:
    """Connect's SinkRecords of the chunk: Kafka's -1 (no timestamp) is a null timestamp, as Connect reads it."""
    topic, partition = chunk.topic, chunk.partition
    return [
        TransformRecord(
            topic,
            partition,
            offset,
            timestamp if timestamp is not None and timestamp >= 0 else None,
            _TIMESTAMP_TYPES.get(kind, CREATE_TIME),
            key[0],
            key[1],
            value[0],
            value[1],
            tuple(Header(name, data) for name, data in headers),
            topic,
        )
        for offset, timestamp, kind, key, value, headers in zip(
            chunk.offsets, chunk.timestamps, chunk.timestamp_types, keys, values, chunk.headers
        )
    ]


def _kind(record: TransformRecord, input_kind: str | None, part: str = "value") -> str | None:
    """The column kind of a record's value (or key): None for null; "struct" with a struct schema; "string" /
    "bytes" for a plain string or bytes schema, for bytes, and for a schemaless string from a "string" column;
    "json" for the rest (schemaless maps, lists, numbers, booleans, strings; numbers, booleans, arrays, maps and
    logical types (Decimal, Date, ...) with a schema, as a converter's column holds them: registry_converter.py)."""
    value, schema = (record.value, record.value_schema) if part == "value" else (record.key, record.key_schema)
    if value is None:
        return None
    if schema is not None:
        if schema.type == "struct":
            return "struct"
        return schema.type if schema.type in ("string", "bytes") and schema.name is None else "json"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    return "string" if isinstance(value, str) and input_kind == "string" else "json"


def key_kind_of(record: TransformRecord, input_kind: str | None) -> str | None:
    """`_kind` of a record's key."""
    return _kind(record, input_kind, "key")


def column(records: list[TransformRecord], kind: str, texts: list | None = None, part: str = "value") -> ValueColumn:
    """The column of records' values (or keys) of one `_kind`; `texts` the JSON text of values no transform
    changed (None elsewhere), kept as read. TransformationError names a value JSON cannot hold."""
    values = [r.value if part == "value" else r.key for r in records]
    if kind == "struct":
        return ValueColumn(
            "struct", values, values, [r.value_schema if part == "value" else r.key_schema for r in records]
        )
    if kind != "json":
        return ValueColumn(kind, values, values)
    texts = texts or [None] * len(values)
    schemas = [r.value_schema if part == "value" else r.key_schema for r in records]
    items = [
        text if text is not None else to_json(value) if schema is not None else _json(value, record)
        for value, text, record, schema in zip(values, texts, records, schemas)
    ]
    if None in schemas:
        return ValueColumn("json", items, values)
    return ValueColumn("json", items, None, schemas)  # values with a schema that are not structs (records.py)


@lru_cache(maxsize=64)
def _decoder(schema: Schema) -> Decoder:
    """The Connect JSON payload reader of a schema (the values of a "json" column with schemas)."""
    return compile_decoder(schema)


def _json(value: Any, record: TransformRecord) -> bytes:
    try:
        return dumps_non_finite_as_text(orjson.dumps, value)
    except TypeError as e:
        raise TransformationError(
            record.source_topic,
            record.partition,
            record.offset,
            f"the value after transforms cannot be written as JSON: {e}",
        ) from None
