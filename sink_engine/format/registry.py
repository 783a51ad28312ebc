"""Format by its canonical config name (see config.keys.FORMAT_CLASSES)."""

from __future__ import annotations

from collections.abc import Callable

from sink_engine.format.avro_format import AvroFormat
from sink_engine.format.base import Format
from sink_engine.format.block_gzip_format import BlockGzipFormat
from sink_engine.format.bytearray_format import ByteArrayFormat
from sink_engine.format.envelope_format import EnvelopeFormat
from sink_engine.format.json_format import JsonFormat
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.format.settings import FormatSettings

_FORMATS: dict[str, Callable[[FormatSettings], Format]] = {
    "json": lambda s: JsonFormat(s.compression, s.compression_level, s.json_decimal_format),
    "parquet": lambda s: ParquetFormat(s.parquet_codec, s.part_size),
    "avro": lambda s: AvroFormat(s.avro_codec, s.part_size),
    "bytearray": lambda s: ByteArrayFormat(
        s.bytearray_extension, s.bytearray_separator, s.compression, s.compression_level
    ),
    "blockgzip": lambda s: BlockGzipFormat(s.blockgzip_block_size, s.compression_level, s.json_decimal_format),
    "envelope": lambda s: EnvelopeFormat(
        s.envelope_encoding, s.parquet_codec, s.avro_codec, s.compression, s.compression_level, s.part_size
    ),
}


def format_for(settings: FormatSettings, format_class: str | None = None) -> Format:
    """The format `format_class` (canonical; default `format.class`, the data objects') with these settings:
    the sidecars name `keys.format.class` and `headers.format.class`."""
    name = format_class or settings.format_class
    build = _FORMATS.get(name)
    if build is None:
        raise AssertionError(f"format {name} passed validation but is not registered")
    return build(settings)
