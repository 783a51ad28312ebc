"""ParquetFormat: the file's values as one Arrow table, written with pyarrow (`parquet.codec`).

Extensions follow the Confluent connector (parquet-mr's codec extensions): `.snappy.parquet`,
`.gz.parquet`, `.zstd.parquet`, `.br.parquet`, `.lz4raw.parquet` (pyarrow's lz4 is Parquet's LZ4_RAW
codec) and `.parquet` for none. Output is byte-deterministic for the same values and pyarrow version:
no timestamps are written, `created_by` names the pyarrow build.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from sink_engine.convert.base import ValueColumn
from sink_engine.format.arrow_values import to_arrow_table
from sink_engine.format.base import EncodedFile, FileContext

CODECS = ("none", "snappy", "gzip", "lz4", "zstd", "brotli")
_EXTENSIONS = {"none": "", "snappy": ".snappy", "gzip": ".gz", "lz4": ".lz4raw", "zstd": ".zstd", "brotli": ".br"}
_LEVELS = {"gzip": 6}  # pyarrow's gzip default is 9 (slow); 6 is zlib's and parquet-mr's default


class ParquetFormat:
    def __init__(self, codec: str = "snappy"):
        self.codec = codec
        self.extension = _EXTENSIONS[codec] + ".parquet"

    def encode(self, values: ValueColumn, context: FileContext) -> EncodedFile:
        table = to_arrow_table(values, context)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression=self.codec, compression_level=_LEVELS.get(self.codec))
        return EncodedFile(sink.getvalue().to_pybytes())
