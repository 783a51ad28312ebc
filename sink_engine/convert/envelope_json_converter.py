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

NOT_AN_ENVELOPE = ('JsonConverter with schemas.enable=true requires "schema" and "payload" fields and no others; '
                   "for plain JSON set value.converter.schemas.enable=false")


class EnvelopeJsonConverter(SchemaRegistryConverter):
    """The "registry" is the envelope itself: the schema reference is the schema's canonical JSON text."""

    label = "JsonConverter envelope"

    def split(self, value: bytes) -> tuple[bytes, Any]:
        try:
            envelope = orjson.loads(value)
        except orjson.JSONDecodeError as e:
            raise ValueError(f"value is not valid JSON: {e}") from None
        if not isinstance(envelope, dict) or envelope.keys() != {"schema", "payload"}:
            raise ValueError(NOT_AN_ENVELOPE)
        return orjson.dumps(envelope["schema"], option=orjson.OPT_SORT_KEYS), envelope["payload"]

    def fetch(self, schema_ref: bytes) -> "_EnvelopeDecoder":
        return _EnvelopeDecoder(parse_schema(orjson.loads(schema_ref)))


class _EnvelopeDecoder:
    def __init__(self, schema):
        self.schema, self._decode = schema, compile_decoder(schema)

    def decode(self, payload: Any) -> Any:
        if payload is None and self.schema.default_value() is None:
            raise ValueError("the payload is null (a null value inside an envelope is not written)")
        return self._decode(payload, "")
