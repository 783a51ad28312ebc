"""ParquetFormat: Arrow tables written with pyarrow (`parquet.codec`), one row group at a time.

A row group closes after the record that brings its records' Kafka value bytes to `s3.part.size`, so an open
file holds about one part of rows, and the object's bytes depend only on its records. Schemaless JSON files
are written when they close (their schema needs every record), one block of about a part at a time, each
cut into row groups of about the same size.

Extensions follow the Confluent connector (parquet-mr's codec extensions): `.snappy.parquet`,
`.gz.parquet`, `.zstd.parquet`, `.br.parquet`, `.lz4raw.parquet` (pyarrow's lz4 is Parquet's LZ4_RAW
codec) and `.parquet` for none. Output is byte-deterministic for the same values and pyarrow version:
no timestamps are written, `created_by` names the pyarrow build.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from sink_engine.config.keys import DEFAULT_PART_SIZE
from sink_engine.format.base import BinarySink, FileContext, Format
from sink_engine.format.columnar import ColumnarEncoder

CODECS = ("none", "snappy", "gzip", "lz4", "zstd", "brotli")
_EXTENSIONS = {"none": "", "snappy": ".snappy", "gzip": ".gz", "lz4": ".lz4raw", "zstd": ".zstd", "brotli": ".br"}
_LEVELS = {"gzip": 6}  # pyarrow's gzip default is 9 (slow); 6 is zlib's and parquet-mr's default


class ParquetFormat(Format):
    columnar = True

    def __init__(self, codec: str = "snappy", row_group_bytes: int = DEFAULT_PART_SIZE):
        self.codec, self.row_group_bytes = codec, row_group_bytes
        self.extension = _EXTENSIONS[codec] + ".parquet"

    def open(self, context: FileContext, out: BinarySink) -> _ParquetEncoder:
        return _ParquetEncoder(self, context, out)


class _ParquetEncoder(ColumnarEncoder):
    def __init__(self, fmt: ParquetFormat, context: FileContext, out: BinarySink):
        super().__init__(context, fmt.row_group_bytes)
        self._fmt, self._out = fmt, out
        self._writer: pq.ParquetWriter | None = None
        self._pending: list[pa.Table] = []
        self._pending_sizes: list[int] = []
        self._pending_bytes = 0  # sum of _pending_sizes

    def _prepare_table(self, table: pa.Table, offsets: list) -> pa.Table:
        return table

    def _write_prepared(self, table: pa.Table, sizes: list) -> None:
        self._pending.append(table)
        self._pending_sizes.extend(sizes)
        self._pending_bytes += sum(sizes)
        if self._pending_bytes < self._fmt.row_group_bytes:  # no cut yet: no running sums over the pending records
            return
        ends = list(itertools.accumulate(self._pending_sizes))
        rows, start, base = pa.concat_tables(self._pending), 0, 0
        while (full := bisect.bisect_left(ends, base + self._fmt.row_group_bytes, lo=start)) < len(ends):
            self._write_row_group(rows.slice(start, full + 1 - start))
            start, base = full + 1, ends[full]
        self._pending = [rows.slice(start)] if start < len(ends) else []
        self._pending_sizes = self._pending_sizes[start:]
        self._pending_bytes = ends[-1] - base

    def _write_spooled(self, table: pa.Table, rows: Callable[[], list[dict]]) -> None:
        """Rows per group from the average size of the table's rows in memory."""
        per_group = max(1, math.ceil(table.num_rows * self._fmt.row_group_bytes / max(1, table.nbytes)))
        for start in range(0, table.num_rows, per_group):
            self._write_row_group(table.slice(start, per_group))

    def _close(self) -> None:
        if self._pending:
            self._write_row_group(pa.concat_tables(self._pending))
        assert self._writer is not None  # a file has a record, so a row group
        self._writer.close()

    def _write_row_group(self, table: pa.Table) -> None:
        """One row group, from one contiguous chunk per column (so that page cuts do not depend on batches)."""
        if self._writer is None:
            self._writer = pq.ParquetWriter(
                self._out, table.schema, compression=self._fmt.codec, compression_level=_LEVELS.get(self._fmt.codec)
            )
        self._writer.write_table(table.combine_chunks(), row_group_size=max(1, table.num_rows))
