"""Keys and header values back from what sidecars and JSON objects hold (task/sidecars.py, format/json_format.py).

- A key or JSON value, by its converter: ByteArrayConverter's bytes (base64 strings in JSON, bytes in Parquet and
  Avro), StringConverter's text (UTF-8), JsonConverter's values (their compact JSON text, as JsonFormat writes
  them: the bytes of the original are not kept, so whitespace and, with schemas.enable, the schema envelope are
  not restored).
- A header value was written as UTF-8 text, or as base64 when its bytes were not UTF-8, and nothing says which:
  the text `true` or a hex id is also valid base64. So a header value is restored as its text's UTF-8 bytes, but
  for the header names given as binary (`--binary-headers`): there, text that is canonical padded base64 of
  bytes that are not UTF-8 is restored as those bytes (the sink wrote it so), any other text as its UTF-8 bytes
  (the sink wrote valid UTF-8 as text). What remains ambiguous: a binary header's bytes that were valid UTF-8
  and spell canonical base64 of bytes that are not (rare for binary data) come back decoded; a text header not
  named binary whose bytes were not UTF-8 comes back as the base64 text the sidecar holds.
"""

from __future__ import annotations

import base64
import binascii

import orjson


def header_value(text: str | None, binary: bool) -> bytes | None:
    if text is None:
        return None
    if not binary:
        return text.encode("utf-8")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text.encode("utf-8")
    if not raw or base64.b64encode(raw).decode("ascii") != text:
        return text.encode("utf-8")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    return text.encode("utf-8")


def headers_of(entries: list, binary_names: frozenset) -> list:
    """[(name, bytes or None)] from a sidecar's list of {"key", "value"}; `binary_names`: `--binary-headers`."""
    return [(entry["key"], header_value(entry["value"], entry["key"] in binary_names)) for entry in entries]


def converted_bytes(item: object, converter: str, from_json: bool) -> bytes | None:
    """The record bytes of a converted key or value: `item` as JSON parsed it (`from_json`) or as Parquet/Avro
    gave it."""
    if item is None:
        return None
    if converter == "bytearray":
        if isinstance(item, bytes):
            return item
        if from_json and isinstance(item, str):
            return base64.b64decode(item)
    if converter == "string" and isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, bytes):
        return item
    if isinstance(item, str) and converter != "json":
        return item.encode("utf-8")
    return orjson.dumps(item)
