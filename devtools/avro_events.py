"""The click events of the Avro benchmarks (issue 22): an enum, a timestamp-millis, a nullable double, an array of
strings and a nested record, as Confluent Schema Registry values (magic byte, schema id, Avro binary)."""

from __future__ import annotations

import io

import fastavro

from devtools.producer import EVENT_TYPES, REGIONS

CLICK = {
    "type": "record",
    "name": "Click",
    "namespace": "bench",
    "fields": [
        {"name": "event_id", "type": "long"},
        {"name": "event_type", "type": {"type": "enum", "name": "EventType", "symbols": list(EVENT_TYPES)}},
        {"name": "timestamp", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "price", "type": ["null", "double"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {
            "name": "device",
            "type": {
                "type": "record",
                "name": "Device",
                "fields": [{"name": "os", "type": "string"}, {"name": "version", "type": "int"}],
            },
        },
        {"name": "region", "type": "string"},
        {"name": "user_id", "type": "string"},
    ],
}


def click_event(event_id: int, base_ms: int = 1_700_000_000_000) -> dict:
    return {
        "event_id": event_id,
        "event_type": EVENT_TYPES[event_id % 3],
        "timestamp": base_ms + event_id * 1000,
        "price": None if event_id % 4 == 0 else event_id % 1000 * 0.25,
        "tags": ["promo", f"campaign-{event_id % 7}"][: event_id % 3],
        "device": {"os": ("ios", "android", "web")[event_id % 3], "version": event_id % 17},
        "region": REGIONS[(event_id // 3) % 3],
        "user_id": f"user-{event_id % 997:04d}",
    }


def registry_values(count: int, schema_id: int) -> list[bytes]:
    """`count` events in the Schema Registry wire format under `schema_id`."""
    parsed, header, values = fastavro.parse_schema(CLICK), b"\x00" + schema_id.to_bytes(4, "big"), []
    for i in range(count):
        out = io.BytesIO()
        out.write(header)
        fastavro.schemaless_writer(out, parsed, click_event(i))
        values.append(out.getvalue())
    return values
