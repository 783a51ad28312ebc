"""Subject name strategies: the Schema Registry converters look a writer schema's version up under the subject
that `<role>.converter.<role>.subject.name.strategy` names (RecordNameStrategy: the record's full name;
TopicRecordNameStrategy: `<topic>-<full name>`), with records serialized by confluent-kafka's own serializers
under that strategy against the test registry."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.serialization import MessageField

from sink_engine.convert import ConverterSettings, converter_for
from sink_engine.errors import ConfigError, RecordError
from sink_engine.records import RecordChunk
from sink_engine.validation import parse_checked_config
from tests.registry_topics import AvroTopic, JsonSchemaTopic, ProtobufTopic
from tests.schema_registry_server import SchemaRegistryServer

SUBJECT = "io.confluent.kafka.serializers.subject"
INPUTS = {  # input: (topic class, converter, the record's full name as Confluent's ParsedSchema.name() gives it)
    "avro": (AvroTopic, "io.confluent.connect.avro.AvroConverter", "shop.Order"),
    "protobuf": (ProtobufTopic, "io.confluent.connect.protobuf.ProtobufConverter", "shop.Order"),
    "jsonschema": (JsonSchemaTopic, "io.confluent.connect.json.JsonSchemaConverter", "Order"),
}
STRATEGIES = {  # config value: (the serializers' subject.name.strategy.type, subject of (topic, record name))
    f"{SUBJECT}.RecordNameStrategy": ("RECORD", lambda topic, name: name),
    "TopicRecordNameStrategy": ("TOPIC_RECORD", lambda topic, name: f"{topic}-{name}"),
}


def config(registry_url: str, converter: str, strategy: str | None, role: str = "value"):
    raw = {
        "name": "c",
        "topics": "orders",
        "bootstrap.servers": "b:9092",
        "s3.bucket.name": "lake",
        "flush.size": 1,
        "format.class": "ParquetFormat",
        f"{role}.converter": converter,
        f"{role}.converter.schema.registry.url": registry_url,
    }
    if strategy is not None:
        raw[f"{role}.converter.{role}.subject.name.strategy"] = strategy
    return parse_checked_config(raw)


def chunk(topic: str, values: list) -> RecordChunk:
    return RecordChunk(
        topic, 0, list(range(len(values))), values, keys=[None] * len(values), timestamps=[0] * len(values)
    )


def versions(registry_url: str, converter: str, strategy: str | None, values: list, role: str = "value") -> list:
    settings = ConverterSettings.from_config(config(registry_url, converter, strategy, role), role)
    return [schema.version for schema in converter_for(settings, "orders").convert(chunk("orders", values)).schemas]


def register_newest_first(registry: SchemaRegistryServer, subject: str, other: str) -> None:
    """The schemas of `subject` registered under `other` too, newest first: each id then has two subjects, whose
    versions order the schemas oppositely."""
    for schema_id in reversed(registry.subjects[subject]):
        entry = registry.entries[schema_id - 1]
        registry.register(other, entry["schema"], entry["references"], entry["schemaType"])


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize(
    "input_name, role", [("avro", "value"), ("protobuf", "value"), ("jsonschema", "value"), ("avro", "key")]
)
def test_versions_are_those_under_the_subject_the_strategy_names(input_name, role, strategy):
    topic_class, converter, record_name = INPUTS[input_name]
    serializer_strategy, subject_of = STRATEGIES[strategy]
    other_strategy = next(s for s in STRATEGIES if s != strategy)
    with SchemaRegistryServer() as registry:
        # given a v1 and a v2 record serialized under the strategy (versions 1 and 2 of its subject), and the same
        # schemas newest first under the other record strategy's subject
        field = MessageField.KEY if role == "key" else MessageField.VALUE
        topic = topic_class(registry.url, "orders", field, strategy=serializer_strategy)
        values = [topic.value(0, 1), topic.value(1, 2)]
        subject = subject_of("orders", record_name)
        assert len(registry.subjects[subject]) == 2
        register_newest_first(registry, subject, STRATEGIES[other_strategy][1]("orders", record_name))
        # then each strategy reads its own subject's versions
        assert versions(registry.url, converter, strategy, values, role) == [1, 2]
        assert versions(registry.url, converter, other_strategy, values, role) == [2, 1]
        # and TopicNameStrategy, the default, finds no orders-<role> subject and two others: no version
        assert versions(registry.url, converter, None, values, role) == [None, None]


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_a_schema_without_a_record_name_is_a_record_error_naming_the_strategy_key(strategy):
    # given an Avro string schema (no record, so no full name) under a record strategy
    with SchemaRegistryServer() as registry:
        schema_id = SchemaRegistryClient({"url": registry.url}).register_schema(
            "strings", Schema(json.dumps({"type": "string"}), "AVRO")
        )
        value = b"\x00" + schema_id.to_bytes(4, "big") + b"\x02a"
        # then the record fails naming its offset and the key (Confluent's RecordNameStrategy refuses it too)
        with pytest.raises(
            RecordError,
            match=r"orders-0@0: AvroConverter: schema id 1: "
            r"value.converter.value.subject.name.strategy names subjects by the "
            "record's full name",
        ):
            versions(registry.url, INPUTS["avro"][1], strategy, [value])


@pytest.mark.parametrize(
    "spelling, strategy",
    [
        (f"{SUBJECT}.TopicNameStrategy", "topic"),
        ("TopicNameStrategy", "topic"),
        (f"{SUBJECT}.RecordNameStrategy", "record"),
        ("RecordNameStrategy", "record"),
        (f"{SUBJECT}.TopicRecordNameStrategy", "topicrecord"),
        (" TopicRecordNameStrategy ", "topicrecord"),
    ],
)
@pytest.mark.parametrize("role", ["value", "key"])
def test_strategy_class_names_and_short_names_are_accepted(role, spelling, strategy):
    parsed = config("http://registry:8081", "AvroConverter", spelling, role)
    assert parsed[f"{role}.converter.{role}.subject.name.strategy"] == strategy


@pytest.mark.parametrize("role", ["value", "key"])
@pytest.mark.parametrize("spelling", [f"{SUBJECT}.TopicNameStrategyX", "com.example.MyStrategy", "topicname"])
def test_an_unknown_strategy_is_a_config_error_naming_the_key(role, spelling):
    with pytest.raises(ConfigError) as raised:
        config("http://registry:8081", "AvroConverter", spelling, role)
    assert raised.value.key == f"{role}.converter.{role}.subject.name.strategy"
    assert "RecordNameStrategy" in str(raised.value)
