"""DelimitedEncoder: a file of values each followed by a separator, plain or gzip (JSON, ByteArray)."""

from __future__ import annotations

from collections.abc import Callable

from sink_engine.format.base import BinarySink
from sink_engine.format.gzip_stream import GzipStream
from sink_engine.records import ValueColumn


class DelimitedEncoder:
    """`to_bytes(values)` gives each value's bytes; they are written as they come, with `separator` after each."""

    def __init__(
        self, out: BinarySink, to_bytes: Callable[[ValueColumn], list], separator: bytes, gzip_level: int | None
    ):
        self._to_bytes, self._separator = to_bytes, separator
        self._gzip = GzipStream(out, gzip_level) if gzip_level is not None else None
        self._sink = self._gzip or out

    def prepare(self, values: ValueColumn, offsets: list) -> list:
        return self._to_bytes(values)

    def write(self, items: list, sizes: list) -> None:
        self._sink.write(self._separator.join(items))  # two writes: no copy of the joined values
        self._sink.write(self._separator)

    def finish(self) -> dict[str, bytes]:
        if self._gzip is not None:
            self._gzip.finish()
        return {}
