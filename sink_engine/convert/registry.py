"""Converter by its canonical config name (see config.keys.CONVERTER_CLASSES)."""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.convert.base import Converter
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.convert.text_converters import ByteArrayConverter, StringConverter

_CONVERTERS = {"json": SchemalessJsonConverter, "string": StringConverter, "bytearray": ByteArrayConverter}


def converter_for(config: SinkConfig) -> Converter:
    return _CONVERTERS[config["value.converter"]]()
