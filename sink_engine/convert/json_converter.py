"""JsonConverter with schemas.enable=false: each value is one JSON document."""

from __future__ import annotations

from collections import deque

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
            if documents is None:
                deque(map(orjson.loads, items), maxlen=0)  # parsed and dropped at C speed
        except orjson.JSONDecodeError:
            self._raise_first_invalid(chunk)
        joined = b"".join(items)
        if b"\n" in joined:
            items = [orjson.dumps(orjson.loads(v)) if b"\n" in v else v for v in items]
        if b"null" in joined:
            items = _nulls_as_none(items)
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


def _nulls_as_none(items: list) -> list:
    """The values with each JSON `null` (spaces around it allowed) as None."""
    return [None if item.strip() == b"null" else item for item in items]
