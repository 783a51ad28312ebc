"""Format by its canonical config name (see config.keys.FORMAT_CLASSES)."""
from __future__ import annotations

from typing import Callable

from sink_engine.config import SinkConfig
from sink_engine.format.avro_format import AvroFormat
from sink_engine.format.base import Format
from sink_engine.format.block_gzip_format import BlockGzipFormat
from sink_engine.format.bytearray_format import ByteArrayFormat
from sink_engine.format.json_format import JsonFormat
from sink_engine.format.parquet_format import ParquetFormat

_FORMATS: dict[str, Callable[[SinkConfig], Format]] = {
    "json": lambda c: JsonFormat(c["s3.compression.type"], c["s3.compression.level"], c["json.decimal.format"]),
    "parquet": lambda c: ParquetFormat(c["parquet.codec"], c["s3.part.size"]),
    "avro": lambda c: AvroFormat(c["avro.codec"], c["s3.part.size"]),
    "bytearray": lambda c: ByteArrayFormat(c["format.bytearray.extension"], c["format.bytearray.separator"],
                                           c["s3.compression.type"], c["s3.compression.level"]),
    "blockgzip": lambda c: BlockGzipFormat(c["format.blockgzip.block.size"], c["s3.compression.level"],
                                           c["json.decimal.format"]),
}


def format_for(config: SinkConfig) -> Format:
    build = _FORMATS.get(config["format.class"])
    if build is None:
        raise AssertionError(f"format {config['format.class']} passed validation but is not registered")
    return build(config)
