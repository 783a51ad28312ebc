"""GzipStream: gzip compression into a binary sink as bytes arrive, with output fixed by the byte stream.

Input reaches zlib in units of UNIT bytes whatever the writes were, so the same bytes always compress to
the same output. No compressor exists until a unit has gathered: a small file costs no zlib state (a few
hundred KiB each, which matters with thousands of open files). The output is what `gzip.compress(data,
level, mtime=0)` gives for the same bytes.
"""

from __future__ import annotations

import zlib

from sink_engine.format.base import BinarySink

UNIT = 1 << 20


class GzipStream:
    def __init__(self, out: BinarySink, level: int):
        self._out, self._level = out, level
        self._pending = bytearray()
        self._compressor: zlib._Compress | None = None

    def write(self, data: bytes) -> None:
        self._pending += data
        if len(self._pending) >= UNIT:
            compressor = self._started()
            whole = len(self._pending) - len(self._pending) % UNIT
            for start in range(0, whole, UNIT):
                self._out.write(compressor.compress(self._pending[start : start + UNIT]))
            del self._pending[:whole]

    def finish(self) -> None:
        """Compress what is left and end the gzip member."""
        compressor = self._started()
        self._out.write(compressor.compress(self._pending) + compressor.flush())
        self._pending, self._compressor = bytearray(), None

    def _started(self) -> zlib._Compress:
        if self._compressor is None:
            self._compressor = zlib.compressobj(self._level, zlib.DEFLATED, 31)  # 31: gzip header, mtime 0
        return self._compressor
