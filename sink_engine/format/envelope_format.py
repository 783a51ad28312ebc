"""EnvelopeFormat: each Kafka record whole in one row (format/envelope_schema.py), a backup that a restore can
read back exactly. `format.envelope.encoding` picks the encoding:

- parquet: `.envelope<codec>.parquet` (`parquet.codec`, the codec part as ParquetFormat names it), written as
  ParquetFormat writes its files (row groups cut at `s3.part.size` of Kafka value bytes; byte-deterministic);
- avro: `.envelope.avro` (`avro.codec`), the fixed schema AVRO_SCHEMA, with AvroFormat's sync marker derived
  from the file's identity (byte-deterministic);
- json: `.envelope.json` (`.envelope.json.gz` with `s3.compression.type=gzip`), one JSON object per line.

The values it takes are envelope rows (kind "envelope"), which the task's steps make from the Kafka records for
this format instead of converting the values (task/run.py).
"""

from __future__ import annotations

from typing import IO, cast

import fastavro

from sink_engine.config.keys import DEFAULT_PART_SIZE
from sink_engine.format.avro_format import sync_marker
from sink_engine.format.base import BinarySink, FileContext, FileEncoder, Format
from sink_engine.format.delimited import DelimitedEncoder
from sink_engine.format.envelope_schema import AVRO_SCHEMA, arrow_table, avro_row, check_kind, json_line
from sink_engine.format.json_format import gzip_level
from sink_engine.format.parquet_format import ParquetFormat, _ParquetEncoder
from sink_engine.records import ValueColumn

ENCODINGS = ("parquet", "avro", "json")
_PARSED_AVRO_SCHEMA = fastavro.parse_schema(AVRO_SCHEMA)


class EnvelopeFormat(Format):
    def __init__(
        self,
        encoding: str = "parquet",
        parquet_codec: str = "snappy",
        avro_codec: str = "null",
        compression: str = "none",
        level: int = -1,
        part_size: int = DEFAULT_PART_SIZE,
    ):
        self.encoding = encoding
        self._parquet = ParquetFormat(parquet_codec, part_size)
        self._avro_codec = avro_codec
        self._gzip = gzip_level(level) if compression == "gzip" else None
        self.extension = (
            ".envelope"
            + {
                "parquet": self._parquet.extension,
                "avro": ".avro",
                "json": ".json.gz" if self._gzip is not None else ".json",
            }[encoding]
        )

    def open(self, context: FileContext, out: BinarySink) -> FileEncoder:
        if self.encoding == "parquet":
            return _EnvelopeParquetEncoder(self._parquet, context, out)
        if self.encoding == "avro":
            return _EnvelopeAvroEncoder(context, out, self._avro_codec)
        return DelimitedEncoder(out, _json_lines, b"\n", self._gzip)


class _EnvelopeParquetEncoder(_ParquetEncoder):
    """ParquetFormat's encoder, given tables of the envelope schema."""

    def prepare(self, values: ValueColumn, offsets: list) -> tuple:
        return False, arrow_table(check_kind(values))


class _EnvelopeAvroEncoder:
    """Rows of AVRO_SCHEMA appended as they come; fastavro ends a block after the record that fills it, so blocks
    do not depend on how records were batched."""

    def __init__(self, context: FileContext, out: BinarySink, codec: str):
        fo = cast(IO, out)  # fastavro's annotation asks for IO; it calls write, flush, tell and seekable
        self._writer = fastavro.write.Writer(fo, _PARSED_AVRO_SCHEMA, codec=codec, sync_marker=sync_marker(context))

    def prepare(self, values: ValueColumn, offsets: list) -> list:
        return [avro_row(row) for row in check_kind(values)]

    def write(self, rows: list, sizes: list) -> None:
        for row in rows:
            self._writer.write(row)

    def finish(self) -> dict[str, bytes]:
        self._writer.flush()
        return {}


def _json_lines(values: ValueColumn) -> list:
    return [json_line(row) for row in check_kind(values)]
