"""ByteArrayFormat: each value's raw bytes followed by `format.bytearray.separator`, as the Confluent
connector writes them; `format.bytearray.extension` (`.bin`), plus `.gz` with `s3.compression.type=gzip`.

Values from ByteArrayConverter are written as they are, strings as UTF-8, JSON values as their text.
"""

from __future__ import annotations

from sink_engine.format.base import BinarySink, FileContext, Format
from sink_engine.format.delimited import DelimitedEncoder
from sink_engine.format.json_format import gzip_level
from sink_engine.records import ValueColumn

DEFAULT_SEPARATOR = "\n"  # Java's System.lineSeparator() on Linux, the connector's default
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def unescape(text: str) -> str:
    """Java-style escapes in a configured separator: `\\n`, `\\r`, `\\t`, `\\b`, `\\f`, `\\0`, `\\\\`, `\\uXXXX`.
    Raises ValueError on an unknown escape."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = text[i + 1 : i + 2]
        if code == "u" and len(text) >= i + 6:
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
        elif code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        else:
            raise ValueError(f"unknown escape \\{code} at position {i}")
    return "".join(out)


class ByteArrayFormat(Format):
    def __init__(
        self, extension: str = ".bin", separator: str = DEFAULT_SEPARATOR, compression: str = "none", level: int = -1
    ):
        self.separator = unescape(separator).encode("utf-8")
        self.compression, self.level = compression, gzip_level(level)
        self.extension = extension + (".gz" if compression == "gzip" else "")

    def open(self, context: FileContext, out: BinarySink) -> DelimitedEncoder:
        return DelimitedEncoder(out, _raw_bytes, self.separator, self.level if self.compression == "gzip" else None)


def _raw_bytes(values: ValueColumn) -> list:
    """Strings as UTF-8; bytes and JSON text as they are."""
    return [item.encode("utf-8") for item in values.items] if values.kind == "string" else values.items
