"""Avro schemas with schema references, read through confluent-kafka's client from the test registry."""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient

from sink_engine.convert.confluent_avro_converter import ConfluentAvroConverter
from sink_engine.convert.confluent_registry import SubjectNames
from sink_engine.errors import RecordError
from sink_engine.records import RecordChunk
from tests.schema_registry_server import SchemaRegistryServer

CITY = {"type": "record", "name": "City", "namespace": "geo", "fields": [{"name": "name", "type": "string"}]}
ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "geo",
    "fields": [{"name": "street", "type": "string"}, {"name": "city", "type": "geo.City"}],
}
PERSON = {
    "type": "record",
    "name": "Person",
    "namespace": "crm",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "home", "type": "geo.Address"},
        {"name": "work", "type": ["null", "geo.Address"], "default": None},
    ],
}


def wire(schema_id: int, named: dict, datum: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(PERSON, dict(named)), datum)
    return b"\x00" + schema_id.to_bytes(4, "big") + out.getvalue()


def test_referenced_named_types_are_fetched_recursively_and_decoded():
    with SchemaRegistryServer() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        client.register_schema("city-value", Schema(json.dumps(CITY), "AVRO"))
        client.register_schema(
            "address-value", Schema(json.dumps(ADDRESS), "AVRO", [SchemaReference("geo.City", "city-value", 1)])
        )
        person_id = client.register_schema(
            "people-value", Schema(json.dumps(PERSON), "AVRO", [SchemaReference("geo.Address", "address-value", 1)])
        )
        named: dict = {}
        fastavro.parse_schema(CITY, named)
        fastavro.parse_schema(ADDRESS, named)
        home = {"street": "1 Main St", "city": {"name": "Springfield"}}
        values = [
            wire(person_id, named, {"id": 7, "home": home, "work": None}),
            wire(person_id, named, {"id": 8, "home": home, "work": home}),
        ]
        converter = ConfluentAvroConverter(SchemaRegistryClient({"url": registry.url}), SubjectNames("people"))
        column = converter.convert(RecordChunk("people", 0, [0, 1], values, keys=[None] * 2, timestamps=[0] * 2))
    assert column.kind == "struct" and column.schema.describe() == "crm.Person v1"
    address = column.schema.field("home").schema
    assert [f.name for f in address.fields] == ["street", "city"] and address.field("city").schema.type == "struct"
    assert column.schema.field("work").schema.optional
    assert column.items == [{"id": 7, "home": home, "work": None}, {"id": 8, "home": home, "work": home}]


def test_a_reference_missing_from_the_registry_names_it():
    with SchemaRegistryServer() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        person_id = client.register_schema(
            "people-value", Schema(json.dumps(PERSON), "AVRO", [SchemaReference("geo.Address", "address-value", 3)])
        )
        converter = ConfluentAvroConverter(client, SubjectNames("people"))
        value = b"\x00" + person_id.to_bytes(4, "big") + b"\x0e"
        with pytest.raises(RecordError, match="geo.Address .address-value version 3., which is not in the Schema"):
            converter.convert(RecordChunk("people", 0, [5], [value], keys=[None], timestamps=[0]))


def test_a_value_that_decodes_to_null_under_a_struct_schema_is_a_null_value():
    """A nullable top-level union: the datum null is a null value, as Connect's AvroConverter gives it (a
    SchemaAndValue of the schema and null), for behavior.on.null.values to decide (task/null_values.py)."""
    nullable = ["null", CITY]
    with SchemaRegistryServer() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        schema_id = client.register_schema("cities-value", Schema(json.dumps(nullable), "AVRO"))
        values = []
        for datum in ({"name": "Lyon"}, None, {"name": "Oslo"}):
            out = io.BytesIO()
            fastavro.schemaless_writer(out, fastavro.parse_schema(nullable), datum)
            values.append(b"\x00" + schema_id.to_bytes(4, "big") + out.getvalue())
        chunk = RecordChunk("cities", 0, [10, 11, 12], values, keys=[None] * 3, timestamps=[0] * 3)
        column = ConfluentAvroConverter(client, SubjectNames("cities")).convert(chunk)
        assert column.kind == "struct" and column.null_positions() == [1]
        assert column.items == [{"name": "Lyon"}, None, {"name": "Oslo"}]
