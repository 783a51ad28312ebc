"""The output format keys, read once from the config: what `format_for` builds a format from."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.format.bytearray_format import unescape


@dataclass(frozen=True)
class FormatSettings:
    format_class: str  # format.class, canonical (config.keys.FORMAT_CLASSES)
    compression: str  # s3.compression.type
    compression_level: int  # s3.compression.level
    json_decimal_format: str
    parquet_codec: str
    avro_codec: str
    part_size: int  # s3.part.size: a Parquet row group, an Avro or Parquet file's in-memory part
    bytearray_extension: str
    bytearray_separator: str
    blockgzip_block_size: int
    envelope_encoding: str = "parquet"  # format.envelope.encoding

    @property
    def separator(self) -> bytes:
        """format.bytearray.separator as ByteArrayFormat writes it (Java escapes unescaped): what readers split on."""
        return unescape(self.bytearray_separator).encode("utf-8")

    @classmethod
    def from_config(cls, config: SinkConfig) -> FormatSettings:
        return cls(
            config["format.class"],
            config["s3.compression.type"],
            config["s3.compression.level"],
            config["json.decimal.format"],
            config["parquet.codec"],
            config["avro.codec"],
            config["s3.part.size"],
            config["format.bytearray.extension"],
            config["format.bytearray.separator"],
            config["format.blockgzip.block.size"],
            config["format.envelope.encoding"],
        )
