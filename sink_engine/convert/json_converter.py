"""JsonConverter with schemas.enable=false: each value is one JSON document."""
from __future__ import annotations

import orjson

from sink_engine.convert.base import ValueColumn
from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk


class SchemalessJsonConverter:
    """Validates each value as JSON and keeps it as single-line JSON text.

    A value on one line is kept byte for byte (numbers keep their exact spelling); one that spans
    lines is re-serialized compactly.
    """

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        loads = orjson.loads
        try:
            documents = [loads(value) for value in chunk.values]
        except orjson.JSONDecodeError:
            self._raise_first_invalid(chunk)
        items = chunk.values
        if b"\n".join(items).count(b"\n") != len(items) - 1:
            items = [orjson.dumps(d) if b"\n" in v else v for v, d in zip(items, documents)]
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
