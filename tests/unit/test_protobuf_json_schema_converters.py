"""ProtobufConverter and JsonSchemaConverter against the test registry, records serialized by confluent-kafka's
own ProtobufSerializer and JSONSerializer: Connect schemas, values, versions, references and errors."""

from __future__ import annotations

import datetime
import decimal
import json
import re

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from sink_engine.convert import ConverterSettings, converter_for
from sink_engine.convert.arrow_types import arrow_schema, struct_table
from sink_engine.convert.confluent_json_schema_converter import ConfluentJsonSchemaConverter
from sink_engine.convert.confluent_protobuf_converter import ConfluentProtobufConverter
from sink_engine.convert.confluent_registry import SubjectNames
from sink_engine.errors import ConfigError, RecordError
from sink_engine.records import RecordChunk
from sink_engine.validation import parse_checked_config
from tests.protobuf_compiler import message_classes
from tests.registry_topics import ADDRESS_PROTO, ORDER_PROTO, JsonSchemaTopic, ProtobufTopic, created_at
from tests.schema_registry_server import SchemaRegistryServer


@pytest.fixture
def registry():
    with SchemaRegistryServer() as server:
        yield server


def chunk(topic: str, values: list) -> RecordChunk:
    return RecordChunk(
        topic, 0, list(range(len(values))), values, keys=[None] * len(values), timestamps=[0] * len(values)
    )


def client(registry) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def shape(schema) -> dict:
    """A schema as nested (type, name, optional) tuples, for comparing mappings."""
    if schema.type == "struct":
        return {f.name: shape(f.schema) for f in schema.fields}
    if schema.type == "array":
        return {"[]": shape(schema.items)}
    if schema.type == "map":
        return {"{}": (shape(schema.keys), shape(schema.values))}
    return schema.type, schema.name, schema.optional


def test_protobuf_messages_map_to_connect_as_protobufdata_does(registry):
    # given orders of schema v1 and v2 serialized by confluent-kafka's ProtobufSerializer
    topic = ProtobufTopic(registry.url, "orders")
    values = [topic.value(0), topic.value(1), topic.value(2, version=2)]
    # when the ProtobufConverter reads them
    column = ConfluentProtobufConverter(client(registry), SubjectNames("orders")).convert(chunk("orders", values))
    # then the schema is typed as Confluent's ProtobufData types it, all fields optional
    assert column.kind == "struct" and [s.describe() for s in column.schemas] == ["Order v1", "Order v1", "Order v2"]
    assert shape(column.schemas[0]) == {
        "id": ("int64", None, True),
        "status": ("string", "Status", True),
        "lines": {"[]": {"sku": ("string", None, True), "qty": ("int32", None, True)}},
        "tags": {"{}": (("string", None, False), ("int32", None, True))},
        "payment_0": {"card": ("string", None, True), "voucher": ("string", None, True)},
        "ship_to": {"street": ("string", None, True), "city": ("string", None, True)},
        "created_at": ("int64", "org.apache.kafka.connect.data.Timestamp", True),
        "discount": {"value": ("int64", None, True)},
        "delivery": ("int32", "org.apache.kafka.connect.data.Date", True),
        "total": ("bytes", "org.apache.kafka.connect.data.Decimal", True),
        "coupon": ("string", None, True),
    }
    assert column.schemas[0].field("payment_0").schema.name == "io.confluent.connect.protobuf.Union.payment"
    assert dict(column.schemas[0].field("total").schema.parameters) == {"scale": "2", "connect.decimal.precision": "10"}
    assert column.schemas[2].field("channel").schema.type == "string"
    # and the values are the messages' (oneof member set, map in key order, unset presence fields null)
    first, second, third = column.items
    assert first == {
        "id": 0,
        "status": "NEW",
        "lines": [{"sku": "s0", "qty": 1}],
        "tags": {"a": 1, "b": 0},
        "payment_0": {"card": "c0", "voucher": None},
        "ship_to": {"street": "0 Main St", "city": "Springfield"},
        "created_at": created_at(0),
        "discount": None,
        "delivery": datetime.date(2024, 2, 1),
        "total": decimal.Decimal("0.25"),
        "coupon": None,
    }
    assert list(first["tags"]) == ["a", "b"]  # map entries in key order, whatever the parser's hash order
    assert second["payment_0"] == {"card": None, "voucher": "v1"} and second["discount"] == {"value": 1}
    assert third["channel"] == "app"
    # and the columns are typed: timestamp, date, decimal, map, list, struct
    table = struct_table(column.slice(0, 2))
    assert table.schema.field("created_at").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("delivery").type == pa.date32()
    assert table.schema.field("total").type == pa.decimal128(10, 2)
    assert table.schema.field("tags").type == pa.map_(pa.field("key", pa.string(), nullable=False), pa.int32())


def test_protobuf_registered_as_proto_text_with_references_is_read_the_same(registry):
    # given .proto text registered as Java clients register it (the reference too), and a record serialized
    # against the latest version, which the registry compiles for format=serialized
    schemas = client(registry)
    schemas.register_schema("geo/address.proto", Schema(ADDRESS_PROTO, "PROTOBUF"))
    schemas.register_schema(
        "texts-value",
        Schema(ORDER_PROTO % "", "PROTOBUF", [SchemaReference("geo/address.proto", "geo/address.proto", 1)]),
    )
    topic = ProtobufTopic(registry.url, "texts")
    serializer = ProtobufSerializer(
        topic.classes[1]["shop.Order"], schemas, {"auto.register.schemas": False, "use.latest.version": True}
    )
    value = serializer(topic.message(3), SerializationContext("texts", MessageField.VALUE))
    # when it is read
    column = ConfluentProtobufConverter(client(registry), SubjectNames("texts")).convert(chunk("texts", [value]))
    # then it decodes as the serialized schema does
    assert column.schema.describe() == "Order v1" and column.items[0]["ship_to"]["street"] == "3 Main St"
    assert "GET /subjects/geo%2Faddress.proto/versions/1" in registry.requests


def test_protobuf_wrappers_as_nullables_and_nested_message_indexes(registry):
    # given a record of the nested message Order.Line (message indexes [0, 0]) and an order
    topic = ProtobufTopic(registry.url, "lines")
    line = ProtobufSerializer(topic.classes[1]["shop.Order.Line"], client(registry))(
        topic.classes[1]["shop.Order.Line"](sku="x", qty=2), topic.context
    )
    # when read with wrapper.for.nullables
    converter = ConfluentProtobufConverter(client(registry), SubjectNames("lines"), wrapper_for_nullables=True)
    lines = converter.convert(chunk("lines", [line]))
    orders = converter.convert(chunk("lines", [topic.value(1)]))
    # then the nested message is the record's type, and a wrapper is its optional primitive
    assert lines.schema.name == "Line" and lines.items == [{"sku": "x", "qty": 2}]
    assert orders.schema.field("discount").schema.type == "int64" and orders.items[0]["discount"] == 1


def test_protobuf_enum_numbers_unsigned_and_recursion(registry):
    classes = message_classes(
        {
            "t.proto": 'syntax = "proto3"; package t; enum Color { RED = 0; }\n'
            "message T { Color color = 1; uint64 big = 2; fixed32 small = 3; }\n"
            "message Tree { string name = 1; repeated Tree children = 2; }"
        }
    )
    serialize = {name: ProtobufSerializer(classes[f"t.{name}"], client(registry)) for name in ("T", "Tree")}
    context = SerializationContext("t", MessageField.VALUE)
    value = serialize["T"](classes["t.T"](color=5, big=2**64 - 2, small=2**32 - 1), context)
    converter = ConfluentProtobufConverter(client(registry), SubjectNames("t"))
    # an unknown enum number is named as Java names it; a uint64 past 2^63 wraps as a Java long
    assert converter.convert(chunk("t", [value])).items == [
        {"color": "UNKNOWN_ENUM_VALUE_Color_5", "big": -2, "small": 2**32 - 1}
    ]
    tree = serialize["Tree"](classes["t.Tree"](name="root"), SerializationContext("u", MessageField.VALUE))
    with pytest.raises(RecordError, match="message t.Tree contains itself"):
        ConfluentProtobufConverter(client(registry), SubjectNames("u")).convert(chunk("u", [tree]))


@pytest.mark.parametrize(
    "value, message",
    [
        (b"\x01" + bytes(16) + b"\x00", "schema GUIDs .magic byte 1. are not supported"),
        (b"\x01\x00", "not in the Schema Registry wire format"),
        (b"\x07abc", "not in the Schema Registry wire format"),
        (b"\x00\x00\x00\x00\x63\x00\x08\x01", "schema id 99 is not in the Schema Registry"),
    ],
)
def test_protobuf_bad_values_name_the_record(registry, value, message):
    good = ProtobufTopic(registry.url, "bad").value(0)
    with pytest.raises(RecordError) as caught:
        ConfluentProtobufConverter(client(registry), SubjectNames("bad")).convert(chunk("bad", [good, value]))
    assert caught.value.offset == 1 and "ProtobufConverter" in str(caught.value)
    assert re.search(message, str(caught.value))


def test_protobuf_converter_refuses_another_schema_type_and_a_payload_that_does_not_parse(registry):
    avro_id = client(registry).register_schema("a-value", Schema('{"type": "string"}', "AVRO"))
    good = ProtobufTopic(registry.url, "bad").value(0)
    converter = ConfluentProtobufConverter(client(registry), SubjectNames("bad"))
    with pytest.raises(RecordError, match="schema id 1 is a AVRO schema, not PROTOBUF"):
        converter.convert(chunk("bad", [b"\x00" + avro_id.to_bytes(4, "big") + b"\x00"]))
    with pytest.raises(RecordError, match="is not a shop.Order"):
        converter.convert(chunk("bad", [good[:-3]]))


def test_json_schema_documents_map_to_connect_and_keep_iso_text(registry):
    # given orders of schema v1 and v2 (address.json referenced) serialized by confluent-kafka's JSONSerializer
    topic = JsonSchemaTopic(registry.url, "jorders")
    values = [topic.value(0), topic.value(1), topic.value(2, version=2)]
    # when the JsonSchemaConverter reads them
    column = ConfluentJsonSchemaConverter(client(registry), SubjectNames("jorders")).convert(chunk("jorders", values))
    # then the schema follows JsonSchemaData, with the referenced schema inlined
    assert [s.describe() for s in column.schemas] == ["Order v1", "Order v1", "Order v2"]
    assert shape(column.schemas[0]) == {
        "id": ("int64", None, False),
        "status": ("string", None, True),
        "lines": {"[]": {"sku": ("string", None, False), "qty": ("int64", None, False)}},
        "tags": {"{}": (("string", None, False), ("int64", None, False))},
        "payment": {
            "io.confluent.connect.json.OneOf.field.0": ("string", None, True),
            "io.confluent.connect.json.OneOf.field.1": {"last4": ("string", None, False)},
        },
        "ship_to": {"street": ("string", None, True), "city": ("string", None, False)},
        "created_at": ("string", "sink_engine.data.IsoTimestamp", False),
        "delivery": ("string", "sink_engine.data.IsoDate", True),
        "total": ("bytes", "org.apache.kafka.connect.data.Decimal", True),
    }
    assert column.schemas[2].field("channel").schema.default == "web"
    # and the values keep the record's text for ISO dates, with the parsed value beside it
    first, second = column.items[:2]
    assert first["created_at"] == "2024-01-15T10:00:00.123000Z" and first["created_at"].value == created_at(0)
    assert first["payment"] == {
        "io.confluent.connect.json.OneOf.field.0": "c0",
        "io.confluent.connect.json.OneOf.field.1": None,
    }
    assert second["payment"]["io.confluent.connect.json.OneOf.field.1"] == {"last4": "0001"}
    assert first["total"] == decimal.Decimal("0.25") and second["delivery"] is None
    # and columnar formats get timestamp, date and decimal columns
    table = struct_table(column.slice(0, 2))
    assert table.schema.field("created_at").type == pa.timestamp("us", tz="UTC")
    assert table.column("created_at").to_pylist() == [created_at(0), created_at(1)]
    assert table.column("delivery").to_pylist() == [datetime.date(2024, 2, 1), None]
    assert arrow_schema(column.schemas[0]).field("total").type == pa.decimal128(10, 2)


def test_json_schema_values_of_the_wrong_type_name_record_and_field(registry):
    good = JsonSchemaTopic(registry.url, "j").value(0)  # registers the schema under j-value
    header = b"\x00" + registry.subjects["j-value"][0].to_bytes(4, "big")
    converter = ConfluentJsonSchemaConverter(client(registry), SubjectNames("j"))
    bad = {**JsonSchemaTopic.document(1), "lines": [{"sku": "a", "qty": "two"}]}
    with pytest.raises(RecordError, match=r"j-0@1: JsonSchemaConverter: lines\[0\].qty: expected an int64"):
        converter.convert(chunk("j", [good, header + json.dumps(bad).encode()]))
    late = {**JsonSchemaTopic.document(1), "created_at": "yesterday"}
    with pytest.raises(RecordError, match="created_at: 'yesterday' is not an ISO-8601 date-time"):
        converter.convert(chunk("j", [header + json.dumps(late).encode()]))


def test_json_fail_invalid_schema_validates_with_confluent_kafkas_deserializer(registry):
    # given a value outside the schema's enum (Connect's types do not see enums)
    JsonSchemaTopic(registry.url, "v").value(0)  # registers the schema under v-value
    header = b"\x00" + registry.subjects["v-value"][0].to_bytes(4, "big")
    value = header + json.dumps({**JsonSchemaTopic.document(1), "status": "LOST"}).encode()
    # then it passes by default, as with Confluent's deserializer, and fails with json.fail.invalid.schema
    converter = ConfluentJsonSchemaConverter(client(registry), SubjectNames("v"))
    assert converter.convert(chunk("v", [value])).items[0]["status"] == "LOST"
    with pytest.raises(RecordError, match="does not validate against schema id .*'LOST' is not one of"):
        ConfluentJsonSchemaConverter(client(registry), SubjectNames("v"), validate=True).convert(chunk("v", [value]))


@pytest.mark.parametrize(
    "schema, message",
    [
        ({"type": "object", "properties": {"a": {"$ref": "missing.json"}}}, "'missing.json' is neither in the schema"),
        ({"type": "object", "title": "Node", "properties": {"next": {"$ref": "#"}}}, "refers to itself"),
        ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 1}]}}}, "allOf of 2"),
    ],
)
def test_json_schemas_without_a_connect_schema_are_refused_naming_the_place(registry, schema, message):
    schema_id = client(registry).register_schema("x-value", Schema(json.dumps(schema), "JSON"))
    value = b"\x00" + schema_id.to_bytes(4, "big") + b"{}"
    with pytest.raises(RecordError, match=f"schema id {schema_id} has no Connect schema: .*{message}"):
        ConfluentJsonSchemaConverter(client(registry), SubjectNames("x")).convert(chunk("x", [value]))


def test_converters_are_built_from_the_connector_config_for_values_and_keys(registry):
    config = parse_checked_config(
        {
            "name": "c",
            "topics": "t",
            "bootstrap.servers": "k:9092",
            "s3.bucket.name": "lake",
            "flush.size": 1,
            "format.class": "ParquetFormat",
            "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
            "value.converter.schema.registry.url": registry.url,
            "value.converter.wrapper.for.nullables": "true",
            "key.converter": "JsonSchemaConverter",
            "key.converter.schema.registry.url": registry.url,
            "key.converter.json.fail.invalid.schema": "true",
        }
    )
    key_topic = JsonSchemaTopic(registry.url, "t", MessageField.KEY)
    keys = converter_for(ConverterSettings.from_config(config, "key"), "t").convert(chunk("t", [key_topic.value(4)]))
    values = converter_for(ConverterSettings.from_config(config, "value"), "t").convert(
        chunk("t", [ProtobufTopic(registry.url, "t").value(1)])
    )
    assert keys.schema.describe() == "Order v1" and "t-key" in registry.subjects
    assert values.items[0]["discount"] == 1


@pytest.mark.parametrize("converter", ["ProtobufConverter", "io.confluent.connect.json.JsonSchemaConverter"])
def test_a_registry_converter_needs_its_registry_url(converter):
    with pytest.raises(ConfigError) as caught:
        parse_checked_config(
            {
                "name": "c",
                "topics": "t",
                "bootstrap.servers": "k:9092",
                "s3.bucket.name": "lake",
                "flush.size": 1,
                "format.class": "JsonFormat",
                "value.converter": converter,
            }
        )
    assert caught.value.key == "value.converter.schema.registry.url"
