"""Protobuf and JSON Schema topics for tests: schemas with nesting, repeated fields, maps, oneofs, references,
well-known and logical types, in two versions, and their records serialized by confluent-kafka's own
ProtobufSerializer and JSONSerializer against the test registry; and a flat Avro topic of two versions
(AvroSerializer)."""

from __future__ import annotations

import datetime
import decimal
import json

from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.protobuf_compiler import message_classes

UTC = datetime.UTC
ADDRESS_PROTO = """syntax = "proto3";
package geo;
message Address { string street = 1; string city = 2; }
"""
ORDER_PROTO = """syntax = "proto3";
package shop;
import "geo/address.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/type/date.proto";
import "confluent/type/decimal.proto";
import "confluent/meta.proto";

message Order {
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  message Line { string sku = 1; int32 qty = 2; }
  int64 id = 1;
  Status status = 2;
  repeated Line lines = 3;
  map<string, int32> tags = 4;
  oneof payment { string card = 5; string voucher = 6; }
  geo.Address ship_to = 7;
  google.protobuf.Timestamp created_at = 8;
  google.protobuf.Int64Value discount = 9;
  google.type.Date delivery = 10;
  confluent.type.Decimal total = 11 [(confluent.field_meta) = {
    params: [{key: "precision", value: "10"}, {key: "scale", value: "2"}]}];
  optional string coupon = 12;%s
}
"""
ORDER_PROTO_V2_FIELD = "\n  string channel = 13;"

ORDER_AVRO = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}],
}
ORDER_AVRO_V2 = {**ORDER_AVRO, "fields": ORDER_AVRO["fields"] + [{"name": "note", "type": "string", "default": "none"}]}

ADDRESS_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Address",
    "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
    "required": ["city"],
}
ORDER_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": ["NEW", "PAID", "SHIPPED"]},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
        "tags": {"type": "object", "additionalProperties": {"type": "integer"}},
        "payment": {"oneOf": [{"type": "string"}, {"$ref": "#/definitions/Card"}]},
        "ship_to": {"$ref": "address.json"},
        "created_at": {"type": "string", "format": "date-time"},
        "delivery": {"type": ["string", "null"], "format": "date"},
        "total": {
            "type": "number",
            "title": "org.apache.kafka.connect.data.Decimal",
            "connect.parameters": {"scale": "2", "connect.decimal.precision": "10"},
        },
    },
    "required": ["id", "created_at", "lines"],
    "definitions": {
        "Line": {
            "type": "object",
            "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
            "required": ["sku", "qty"],
        },
        "Card": {"type": "object", "properties": {"last4": {"type": "string"}}, "required": ["last4"]},
    },
}
ORDER_JSON_V2 = {
    **ORDER_JSON,
    "properties": {**ORDER_JSON["properties"], "channel": {"type": "string", "default": "web"}},
}


def created_at(i: int) -> datetime.datetime:
    return datetime.datetime(2024, 1, 15, 10, 0, i, 123000, tzinfo=UTC)


def order_fields(i: int) -> dict:
    """What record i holds, in Python terms shared by both encodings."""
    return {
        "id": i,
        "status": ["NEW", "PAID", "SHIPPED"][i % 3],
        "lines": [{"sku": f"s{i}", "qty": i + 1}],
        "tags": {"b": i, "a": 1},
        "card": f"c{i}" if i % 2 == 0 else None,
        "ship_to": {"street": f"{i} Main St", "city": "Springfield"},
        "created_at": created_at(i),
        "delivery": datetime.date(2024, 2, 1 + i % 28),
        "total": decimal.Decimal(f"{i}.25"),
    }


class ProtobufTopic:
    """Serializes orders of schema v1 or v2 with confluent-kafka's ProtobufSerializer, registered under the
    subject of `strategy` (its subject.name.strategy.type: TOPIC, RECORD or TOPIC_RECORD; record name
    shop.Order)."""

    def __init__(self, registry_url: str, topic: str, field: str = MessageField.VALUE, strategy: str = "TOPIC"):
        self.client = SchemaRegistryClient({"url": registry_url})
        self.context = SerializationContext(topic, field)
        self.classes = {
            version: message_classes(
                {
                    "geo/address.proto": ADDRESS_PROTO,
                    "shop/order.proto": ORDER_PROTO % (ORDER_PROTO_V2_FIELD if version == 2 else ""),
                }
            )
            for version in (1, 2)
        }
        conf = {"subject.name.strategy.type": strategy}
        self._serializers = {v: ProtobufSerializer(c["shop.Order"], self.client, conf) for v, c in self.classes.items()}

    def message(self, i: int, version: int = 1):
        fields, order = order_fields(i), self.classes[version]["shop.Order"]()
        order.id, order.status = fields["id"], fields["status"]
        for line in fields["lines"]:
            order.lines.add(**line)
        order.tags.update(fields["tags"])
        if fields["card"]:
            order.card = fields["card"]
        else:
            order.voucher = f"v{i}"
        order.ship_to.street, order.ship_to.city = fields["ship_to"]["street"], fields["ship_to"]["city"]
        order.created_at.FromDatetime(fields["created_at"])
        if i % 2:
            order.discount.value = i
        day = fields["delivery"]
        order.delivery.year, order.delivery.month, order.delivery.day = day.year, day.month, day.day
        unscaled = int(fields["total"].scaleb(2))
        order.total.value, order.total.scale = unscaled.to_bytes(8, "big", signed=True), 2
        if version == 2:
            order.channel = "app"
        return order

    def value(self, i: int, version: int = 1) -> bytes:
        return self._serializers[version](self.message(i, version), self.context)


class JsonSchemaTopic:
    """Serializes orders of schema v1 or v2 with confluent-kafka's JSONSerializer (address.json referenced),
    registered under the subject of `strategy` (as ProtobufTopic's; record name: the title, Order)."""

    def __init__(self, registry_url: str, topic: str, field: str = MessageField.VALUE, strategy: str = "TOPIC"):
        self.client = SchemaRegistryClient({"url": registry_url})
        self.context = SerializationContext(topic, field)
        address = self.client.register_schema_full_response("address.json", Schema(json.dumps(ADDRESS_JSON), "JSON"))
        reference = [SchemaReference("address.json", "address.json", address.version)]
        conf = {"subject.name.strategy.type": strategy}
        self._serializers = {
            v: JSONSerializer(Schema(json.dumps(s), "JSON", reference), self.client, conf=conf)
            for v, s in ((1, ORDER_JSON), (2, ORDER_JSON_V2))
        }

    @staticmethod
    def document(i: int, version: int = 1) -> dict:
        fields = order_fields(i)
        card = fields.pop("card")
        document = {
            **fields,
            "payment": card or {"last4": f"{i:04d}"},
            "created_at": fields["created_at"].isoformat().replace("+00:00", "Z"),
            "delivery": fields["delivery"].isoformat() if i % 2 == 0 else None,
            "total": float(fields["total"]),
        }
        if version == 2:
            document["channel"] = "app"
        return document

    def value(self, i: int, version: int = 1) -> bytes:
        return self._serializers[version](self.document(i, version), self.context)


class AvroTopic:
    """Serializes flat orders ({id, item}; v2 adds note, default "none") of schema v1 or v2 with confluent-kafka's
    AvroSerializer, registered under the subject of `strategy` (as ProtobufTopic's; record name shop.Order)."""

    def __init__(self, registry_url: str, topic: str, field: str = MessageField.VALUE, strategy: str = "TOPIC"):
        self.client = SchemaRegistryClient({"url": registry_url})
        self.context = SerializationContext(topic, field)
        conf = {"subject.name.strategy.type": strategy}
        self._serializers = {
            v: AvroSerializer(self.client, json.dumps(s), conf=conf) for v, s in ((1, ORDER_AVRO), (2, ORDER_AVRO_V2))
        }

    @staticmethod
    def document(i: int, version: int = 1) -> dict:
        return {"id": i, "item": f"i{i}", **({"note": f"n{i}"} if version == 2 else {})}

    def value(self, i: int, version: int = 1) -> bytes:
        return self._serializers[version](self.document(i, version), self.context)
