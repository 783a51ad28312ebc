"""BlockGzipFormat: JSON lines (as JsonFormat writes them) in a series of independent gzip members, with
an index beside the object so that a reader can fetch one member with a ranged GET.

A member ends after the record that brings its uncompressed bytes to `format.blockgzip.block.size`
(records are never split), so the object is one valid gzip stream to any gzip tool (`.json.gz`).
Members are compressed as records arrive. The companion `<stem>.index.json` is `{"chunks":
[{"first_record_offset", "last_record_offset", "num_records", "byte_offset", "byte_length",
"byte_length_uncompressed"}, ...]}`.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable

import orjson

from sink_engine.format.base import BinarySink, FileContext, Format
from sink_engine.format.gzip_stream import GzipStream
from sink_engine.format.json_format import gzip_level, json_lines_writer
from sink_engine.records import ValueColumn

INDEX_SUFFIX = ".index.json"
DEFAULT_BLOCK_SIZE = 64 * 1024 * 1024


class BlockGzipFormat(Format):
    extension = ".json.gz"
    writes_json = True

    def __init__(self, block_size: int = DEFAULT_BLOCK_SIZE, level: int = -1, decimal_format: str = "base64"):
        self.block_size, self.level = block_size, gzip_level(level)
        self.to_lines = json_lines_writer(decimal_format)

    def open(self, context: FileContext, out: BinarySink) -> _BlockGzipEncoder:
        return _BlockGzipEncoder(out, self.block_size, self.level, self.to_lines)


class _BlockGzipEncoder:
    def __init__(self, out: BinarySink, block_size: int, level: int, to_lines: Callable[[ValueColumn], list]):
        self._out, self._block_size, self._level, self._to_lines = out, block_size, level, to_lines
        self._chunks: list[dict] = []
        self._member: GzipStream | None = None

    def prepare(self, values: ValueColumn, offsets: list) -> tuple:
        return self._to_lines(values), offsets

    def write(self, prepared: tuple, sizes: list) -> None:
        lines, offsets = prepared
        ends = list(itertools.accumulate(len(line) + 1 for line in lines))
        start, base = 0, -self._chunks[-1]["byte_length_uncompressed"] if self._member else 0
        while start < len(lines):
            full = bisect.bisect_left(ends, base + self._block_size, lo=start)  # the record filling the member
            stop = min(full + 1, len(lines))
            self._append(lines[start:stop], offsets[start], offsets[stop - 1])
            if full < len(lines):
                self._end_member()
            start, base = stop, ends[stop - 1]

    def finish(self) -> dict[str, bytes]:
        if self._member is not None:
            self._end_member()
        return {INDEX_SUFFIX: orjson.dumps({"chunks": self._chunks})}

    def _append(self, lines: list, first_offset: int, last_offset: int) -> None:
        raw = b"\n".join(lines) + b"\n"
        if self._member is None:
            self._member = GzipStream(self._out, self._level)
            self._chunks.append(
                {
                    "first_record_offset": first_offset,
                    "last_record_offset": last_offset,
                    "num_records": 0,
                    "byte_offset": self._out.tell(),
                    "byte_length": 0,
                    "byte_length_uncompressed": 0,
                }
            )
        chunk = self._chunks[-1]
        chunk["last_record_offset"] = last_offset
        chunk["num_records"] += len(lines)
        chunk["byte_length_uncompressed"] += len(raw)
        self._member.write(raw)

    def _end_member(self) -> None:
        assert self._member is not None  # called with a member open
        self._member.finish()
        self._member = None
        chunk = self._chunks[-1]
        chunk["byte_length"] = self._out.tell() - chunk["byte_offset"]
