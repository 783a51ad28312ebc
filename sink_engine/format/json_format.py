"""JsonFormat: one JSON value per line, optionally gzip-compressed (`.json` / `.json.gz`).

As in the Confluent connector, a string value is written as a JSON string and a bytes value as a
base64 JSON string; JSON values are written as their compact text.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import orjson

from sink_engine.convert import connect_json
from sink_engine.format.base import BinarySink, FileContext, Format
from sink_engine.format.delimited import DelimitedEncoder
from sink_engine.records import ValueColumn

DEFAULT_GZIP_LEVEL = 6


def gzip_level(level: int) -> int:
    """`s3.compression.level`: -1 means the default level, 6."""
    return DEFAULT_GZIP_LEVEL if level == -1 else level


class JsonFormat(Format):
    writes_json = True

    def __init__(self, compression: str = "none", level: int = -1, decimal_format: str = "base64"):
        self.compression = compression
        self.level = gzip_level(level)
        self.extension = ".json.gz" if compression == "gzip" else ".json"
        self.to_lines = json_lines_writer(decimal_format)

    def open(self, context: FileContext, out: BinarySink) -> DelimitedEncoder:
        return DelimitedEncoder(out, self.to_lines, b"\n", self.level if self.compression == "gzip" else None)


def json_lines_writer(decimal_format: str = "base64") -> Callable[[ValueColumn], list]:
    """A function giving each value as one line of JSON text, without the newline (`json.decimal.format`)."""
    numeric = decimal_format == "numeric"

    def json_lines(values: ValueColumn) -> list:
        if values.kind == "json":
            return values.items
        if values.kind == "string":
            return [orjson.dumps(item) for item in values.items]
        if values.kind == "struct":
            return [connect_json.to_json(item, numeric) for item in values.items]
        return [orjson.dumps(base64.b64encode(item).decode("ascii")) for item in values.items]

    return json_lines
