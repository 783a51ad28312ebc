"""What the schema'd converters share: a header naming the schema, a schema cache, one column per chunk.

A subclass implements `split(value) -> (schema_ref, payload)` (the registry's wire header) and
`fetch(schema_ref) -> decoder` (a registry lookup, done once per schema reference and cached). A decoder
has `schema` (a Connect Schema, or None for schemaless JSON payloads) and `decode(payload)`; it may have
`arrow`, a columnar reader (convert/avro_arrow.py) or None.

Columnar path: when every record's decoder has a reader, each run of one schema is read at once into Arrow
(an ArrowStructColumn, whose Python values are decoded only if a step reads them). Any run the reader does
not take sends the whole chunk down the general path, one datum at a time, which names a bad record.
"""

from __future__ import annotations

from typing import Any, Protocol

from sink_engine.convert.arrow_column import ArrowStructColumn
from sink_engine.convert.connect_json import to_json
from sink_engine.convert.schema import Schema
from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk, ValueColumn


class SchemaDecoder(Protocol):
    """What `fetch` gives for a schema reference: its Connect schema (None: schemaless JSON) and its payloads'
    decoder."""

    @property
    def schema(self) -> Schema | None: ...

    def decode(self, payload: Any) -> Any: ...


class SchemaRegistryConverter:
    label = "converter"  # names the converter in record errors

    def __init__(self) -> None:
        self._decoders: dict[bytes, SchemaDecoder] = {}

    def split(self, value: bytes) -> tuple[bytes, Any]:
        raise NotImplementedError

    def fetch(self, schema_ref: bytes) -> SchemaDecoder:
        raise NotImplementedError

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        decoders, payloads = self._split_all(chunk)
        if all(getattr(decoder, "arrow", None) is not None for decoder in decoders):
            runs = _read_runs(decoders, payloads)
            if runs is not None:
                return ArrowStructColumn(runs, payloads, decoders, [decoder.schema for decoder in decoders])
        items = []
        for offset, decoder, payload in zip(chunk.offsets, decoders, payloads):
            try:
                items.append(decoder.decode(payload))
            except ValueError as e:
                raise RecordError(chunk.topic, chunk.partition, offset, f"{self.label}: {e}") from None
        return column_of(items, [decoder.schema for decoder in decoders], chunk)

    def _split_all(self, chunk: RecordChunk) -> tuple[list, list]:
        """Each record's decoder and payload; RecordError at the first header or schema that fails."""
        decoders: list = []
        payloads: list = []
        split, known = self.split, self._decoders
        add_decoder, add_payload = decoders.append, payloads.append
        for offset, value in zip(chunk.offsets, chunk.values):
            try:
                schema_ref, payload = split(value)
                decoder = known.get(schema_ref)
                if decoder is None:
                    decoder = known[schema_ref] = self.fetch(schema_ref)
            except ValueError as e:
                raise RecordError(chunk.topic, chunk.partition, offset, f"{self.label}: {e}") from None
            add_decoder(decoder)
            add_payload(payload)
        return decoders, payloads


def _read_runs(decoders: list, payloads: list) -> list | None:
    """One Arrow table per run of records of one decoder, or None when a run's reader does not take it."""
    runs, start = [], 0
    for stop in range(1, len(decoders) + 1):
        if stop < len(decoders) and decoders[stop] is decoders[start]:
            continue
        table = decoders[start].arrow.read(payloads[start:stop])
        if table is None:
            return None
        runs.append(table)
        start = stop
    return runs


def column_of(items: list, schemas: list, chunk: RecordChunk) -> ValueColumn:
    """The column of decoded values: "struct" when every schema is a struct; "string" / "bytes" for those
    top-level types; "json" (compact Connect JSON text) for other schemas, with them, and for schemaless JSON
    values. A value that decodes to null (a null payload under an optional schema) stays None: a null value
    (ValueColumn.null_positions). Values of structs and of other schemas cannot share a topic-partition's
    chunk (a RecordError, as Connect's formats write one schema per file)."""
    kinds = [None if item is None else _kind(schema) for item, schema in zip(items, schemas)]
    kind = next((kind for kind in kinds if kind is not None), "json")
    if any(other not in (kind, None) for other in kinds):
        position = next(i for i, other in enumerate(kinds) if other not in (kind, None))
        raise RecordError(
            chunk.topic,
            chunk.partition,
            chunk.offsets[position],
            f"its value is {kinds[position]} after {kind} values in the same batch; "
            "mixing struct and non-struct values in one topic-partition is not supported",
        )
    if kind == "struct":
        return ValueColumn("struct", items, items, schemas)
    if kind in ("string", "bytes"):
        return ValueColumn(kind, items)
    texts = [None if item is None else to_json(item) for item in items]
    return ValueColumn("json", texts, schemas=schemas if schemas[0] is not None else None)


def _kind(schema: Schema | None) -> str:
    if schema is None:
        return "json"
    if schema.type == "struct":
        return "struct"
    return schema.type if schema.type in ("string", "bytes") and schema.name is None else "json"
