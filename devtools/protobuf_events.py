"""The click events of devtools/avro_events.py as Protobuf, written as a Confluent user would write them: an enum,
a google.protobuf.Timestamp, an `optional double`, a repeated string and a nested message, as Confluent Schema
Registry values (magic byte, schema id, message indexes, Protobuf binary). Needs the dev dependencies (protoc)."""

from __future__ import annotations

from devtools.avro_events import click_event

CLICK_PROTO = """syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";

message Click {
  enum EventType { click = 0; view = 1; purchase = 2; }
  message Device { string os = 1; int32 version = 2; }
  int64 event_id = 1;
  EventType event_type = 2;
  google.protobuf.Timestamp timestamp = 3;
  optional double price = 4;
  repeated string tags = 5;
  Device device = 6;
  string region = 7;
  string user_id = 8;
}
"""
PROTO_FILE = "bench/click.proto"


def click_class():
    from tests.protobuf_compiler import message_classes

    return message_classes({PROTO_FILE: CLICK_PROTO})["bench.Click"]


def click_message(message_class, event_id: int):
    event = click_event(event_id)
    message = message_class(
        event_id=event["event_id"],
        event_type=event["event_type"],
        tags=event["tags"],
        device=event["device"],
        region=event["region"],
        user_id=event["user_id"],
    )
    message.timestamp.FromMilliseconds(event["timestamp"])
    if event["price"] is not None:
        message.price = event["price"]
    return message


def registry_values(count: int, schema_id: int) -> list[bytes]:
    """`count` events in the Schema Registry wire format under `schema_id` (message index 0: Click)."""
    message_class, header = click_class(), b"\x00" + schema_id.to_bytes(4, "big") + b"\x00"
    return [header + click_message(message_class, i).SerializeToString() for i in range(count)]
