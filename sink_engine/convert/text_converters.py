"""StringConverter and ByteArrayConverter: values as UTF-8 text or as raw bytes."""

from __future__ import annotations

from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk, ValueColumn


class StringConverter:
    def convert(self, chunk: RecordChunk) -> ValueColumn:
        try:
            return ValueColumn("string", [value.decode("utf-8") for value in chunk.values])
        except UnicodeDecodeError:
            for position, value in enumerate(chunk.values):
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise RecordError(
                        chunk.topic, chunk.partition, chunk.offsets[position], f"value is not UTF-8 text: {e}"
                    ) from None
            raise


class ByteArrayConverter:
    """ByteArrayConverter: values pass through as bytes."""

    def convert(self, chunk: RecordChunk) -> ValueColumn:
        return ValueColumn("bytes", list(chunk.values))
