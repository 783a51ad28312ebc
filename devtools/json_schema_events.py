"""The click events of devtools/avro_events.py as JSON Schema values through a Schema Registry (issue 22), written
as a Confluent user would: a `title`, an enum of strings, the timestamp as an integer titled as Connect's Timestamp
(as JsonSchemaData writes it), a nullable number (oneOf null / number), an array of strings and a nested object.
A value is the magic byte, the schema id and the event's compact JSON (the bytes of the schemaless JSON rows)."""

from __future__ import annotations

import orjson

from devtools.avro_events import click_event
from devtools.producer import EVENT_TYPES

CLICK_JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Click",
    "type": "object",
    "properties": {
        "event_id": {"type": "integer"},
        "event_type": {"type": "string", "enum": list(EVENT_TYPES)},
        "timestamp": {"type": "integer", "title": "org.apache.kafka.connect.data.Timestamp", "connect.type": "int64"},
        "price": {"oneOf": [{"type": "null"}, {"type": "number"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "device": {
            "type": "object",
            "title": "Device",
            "properties": {"os": {"type": "string"}, "version": {"type": "integer", "connect.type": "int32"}},
            "required": ["os", "version"],
        },
        "region": {"type": "string"},
        "user_id": {"type": "string"},
    },
    "required": ["event_id", "event_type", "timestamp", "tags", "device", "region", "user_id"],
}


def json_schema_values(count: int, schema_id: int) -> list[bytes]:
    """`count` events in the Schema Registry wire format under `schema_id`."""
    header = b"\x00" + schema_id.to_bytes(4, "big")
    return [header + orjson.dumps(click_event(i)) for i in range(count)]
