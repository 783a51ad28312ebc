"""JsonConverter with schemas.enable=true: each value is a `{"schema": ..., "payload": ...}` envelope.

A struct schema gives a "struct" column (payloads decoded to Python values of the schema, see
connect_json.py); other top-level schemas give the column kinds of `registry_converter.column_of`. Parsed
schemas are cached by their canonical JSON text, so records that share a schema share one `Schema` object.
"""

from __future__ import annotations

from typing import Any

import orjson

from sink_engine.convert.connect_json import compile_decoder, parse_schema
from sink_engine.convert.registry_converter import SchemaRegistryConverter
from sink_engine.convert.schema import Schema

_SCHEMA, _PAYLOAD = b'{"schema":', b',"payload":'
KNOWN_LAYOUTS = 64  # schema texts remembered per converter (a task's topic has few schema versions)
NOT_AN_ENVELOPE = (
    'JsonConverter with schemas.enable=true requires "schema" and "payload" fields and no others; '
    "for plain JSON set value.converter.schemas.enable=false"
)


class EnvelopeJsonConverter(SchemaRegistryConverter):
    """The "registry" is the envelope itself: the schema reference is the schema's canonical JSON text.

    Connect writes an envelope as `{"schema":<schema>,"payload":<payload>}`; once a schema's text has been seen
    in that layout (and parsed), later values that start with the same text have only their payload parsed."""

    label = "JsonConverter envelope"

    def __init__(self) -> None:
        super().__init__()
        self._known: dict[bytes, bytes] = {}  # a schema's text as written -> its canonical JSON text

    def split(self, value: bytes) -> tuple[bytes, Any]:
        schema_text, payload_text = _layout(value)
        reference = self._known.get(schema_text) if schema_text is not None else None
        if reference is not None:
            try:
                return reference, orjson.loads(payload_text)
            except orjson.JSONDecodeError:
                pass  # not a payload after all: the whole value is read below, and its error named
        try:
            envelope = orjson.loads(value)
        except orjson.JSONDecodeError as e:
            raise ValueError(f"value is not valid JSON: {e}") from None
        if not isinstance(envelope, dict) or envelope.keys() != {"schema", "payload"}:
            raise ValueError(NOT_AN_ENVELOPE)
        reference = orjson.dumps(envelope["schema"], option=orjson.OPT_SORT_KEYS)
        if schema_text is not None and len(self._known) < KNOWN_LAYOUTS and _parses_to(schema_text, envelope["schema"]):
            self._known[schema_text] = reference
        return reference, envelope["payload"]

    def fetch(self, schema_ref: bytes) -> _EnvelopeDecoder:
        return _EnvelopeDecoder(parse_schema(orjson.loads(schema_ref)))


def _layout(value: bytes) -> tuple[bytes | None, bytes]:
    """The schema's and the payload's text of a value in Connect's layout, cut at the last `,"payload":`; (None,
    b"") for another layout. A cut inside the payload gives a schema text never seen, so it is never trusted."""
    cut = value.rfind(_PAYLOAD)
    if cut < 0 or not value.startswith(_SCHEMA) or not value.endswith(b"}"):
        return None, b""
    return value[len(_SCHEMA) : cut], value[cut + len(_PAYLOAD) : -1]


def _parses_to(text: bytes, schema: Any) -> bool:
    """Whether `text` alone is the JSON of `schema` (the cut was where the schema ends)."""
    try:
        return orjson.loads(text) == schema
    except orjson.JSONDecodeError:
        return False


class _EnvelopeDecoder:
    def __init__(self, schema: Schema) -> None:
        self.schema, self._decode = schema, compile_decoder(schema)

    def decode(self, payload: Any) -> Any:
        """The payload's value; a null payload is the schema's default, a null value under an optional schema (as
        JsonConverter.convertToConnect reads it) and an error under a required one."""
        return self._decode(payload, "")
