"""JsonConverter with schemas.enable=false: each value is one JSON document."""
from __future__ import annotations

import orjson

from sink_engine.convert.base import ValueColumn
from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk


class SchemalessJsonConverter:
    """Validates each value as JSON and keeps it as compact single-line JSON text.

    A value that is already on one line is kept byte for byte (numbers keep their exact spelling);
    one that spans lines is re-serialized compactly.
    """

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        loads, items = orjson.loads, []
        append = items.append
        for position, value in enumerate(chunk.values):
            try:
                document = loads(value)
            except orjson.JSONDecodeError as e:
                raise RecordError(
                    chunk.topic, chunk.partition, chunk.offsets[position], f"value is not valid JSON: {e}"
                ) from None
            if b"\n" in value or b"\r" in value:
                append(orjson.dumps(document))
            else:
                append(value.strip())
        return ValueColumn("json", items)
