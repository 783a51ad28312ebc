"""BlockGzipFormat: JSON lines (as JsonFormat writes them) in a series of independent gzip members, with
an index beside the object so that a reader can fetch one member with a ranged GET.

A member ends after the record that brings its uncompressed bytes to `format.blockgzip.block.size`
(records are never split), so the object is one valid gzip stream to any gzip tool (`.json.gz`).
The companion `<stem>.index.json` is `{"chunks": [{"first_record_offset", "last_record_offset",
"num_records", "byte_offset", "byte_length", "byte_length_uncompressed"}, ...]}`.
"""
from __future__ import annotations

import bisect
import gzip
import itertools

import orjson

from sink_engine.convert.base import ValueColumn
from sink_engine.format.base import EncodedFile, FileContext
from sink_engine.format.json_format import gzip_level, json_lines

INDEX_SUFFIX = ".index.json"
DEFAULT_BLOCK_SIZE = 64 * 1024 * 1024


def block_bounds(line_sizes: list[int], block_size: int) -> list[tuple[int, int]]:
    """[start, stop) positions of each member: each ends at the first record reaching `block_size` bytes."""
    ends = list(itertools.accumulate(line_sizes))
    bounds, start, base = [], 0, 0
    while start < len(ends):
        stop = min(bisect.bisect_left(ends, base + block_size, lo=start) + 1, len(ends))
        bounds.append((start, stop))
        start, base = stop, ends[stop - 1]
    return bounds


class BlockGzipFormat:
    extension = ".json.gz"

    def __init__(self, block_size: int = DEFAULT_BLOCK_SIZE, level: int = -1):
        self.block_size, self.level = block_size, gzip_level(level)

    def encode(self, values: ValueColumn, context: FileContext) -> EncodedFile:
        lines = json_lines(values)
        members, chunks, position = [], [], 0
        for start, stop in block_bounds([len(line) + 1 for line in lines], self.block_size):
            raw = b"\n".join(lines[start:stop]) + b"\n"
            member = gzip.compress(raw, compresslevel=self.level, mtime=0)
            chunks.append({
                "first_record_offset": context.offsets[start], "last_record_offset": context.offsets[stop - 1],
                "num_records": stop - start, "byte_offset": position, "byte_length": len(member),
                "byte_length_uncompressed": len(raw),
            })
            members.append(member)
            position += len(member)
        index = orjson.dumps({"chunks": chunks})
        return EncodedFile(b"".join(members), {INDEX_SUFFIX: index})
