"""JsonConverter with schemas.enable=false: each value is one JSON document."""

from __future__ import annotations

import operator

import orjson

from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk, ValueColumn


class SchemalessJsonConverter:
    """Validates each value as JSON and keeps it as single-line JSON text; the JSON `null` is a null value (None), as
    JsonConverter.toConnectData reads it, for `behavior.on.null.values` (ValueColumn.null_positions).

    A value on one line is kept byte for byte (numbers keep their exact spelling); one that spans
    lines is re-serialized compactly. The parsed values are kept for steps that read fields only with
    `keep_documents` (keeping them costs about a third of the parse; `ValueColumn.documents()` parses again).
    """

    def __init__(self, keep_documents: bool = True):
        self.keep_documents = keep_documents

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        items = chunk.values
        try:
            documents = list(map(orjson.loads, items)) if self.keep_documents else None
            # parsed and dropped at C speed, the nulls counted
            nulls = operator.countOf(map(orjson.loads, items), None) if documents is None else None in documents
        except orjson.JSONDecodeError:
            self._raise_first_invalid(chunk)
        if b"\n" in b"".join(items):
            items = [orjson.dumps(orjson.loads(v)) if b"\n" in v else v for v in items]
        if nulls:
            items = [None if item.strip() == b"null" else item for item in items]
        return ValueColumn("json", items, documents)

    @staticmethod
    def _raise_first_invalid(chunk: RecordChunk) -> None:
        for position, value in enumerate(chunk.values):
            try:
                orjson.loads(value)
            except orjson.JSONDecodeError as e:
                raise RecordError(
                    chunk.topic, chunk.partition, chunk.offsets[position], f"value is not valid JSON: {e}"
                ) from None
