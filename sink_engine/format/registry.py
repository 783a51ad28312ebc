"""Format by its canonical config name (see config.keys.FORMAT_CLASSES)."""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.format.base import Format
from sink_engine.format.json_format import JsonFormat


def format_for(config: SinkConfig) -> Format:
    if config["format.class"] == "json":
        return JsonFormat(config["s3.compression.type"], config["s3.compression.level"])
    raise AssertionError(f"format {config['format.class']} passed validation but is not registered")
