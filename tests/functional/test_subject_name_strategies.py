"""Subject name strategies end to end (real broker, moto, local Spark, the test registry): Avro and Protobuf
topics whose schemas are registered under RecordNameStrategy's or TopicRecordNameStrategy's subject, sunk with
schema.compatibility BACKWARD: files rotate on a newer version and older records are projected up, as with
TopicNameStrategy. The same schemas are also registered newest first under the other strategy's subject, so
a run that looked under the wrong subject would order them the other way."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.registry_topics import AvroTopic, ProtobufTopic
from tests.runs import committed_offsets
from tests.s3_reader import list_keys
from tests.schema_registry_server import SchemaRegistryServer

# Versions by offset with flush.size 3: the v2 record closes offsets 0-1; offsets 3-4 are projected up to v2.
VERSIONS = [1, 1, 2, 1, 1]
FILES = {0: [0, 1], 2: [2, 3, 4]}
INPUTS = {  # input: (topic class, converter, the v2 field and its value in v2 records and in projected ones)
    "avro": (AvroTopic, "io.confluent.connect.avro.AvroConverter", "note", lambda i: f"n{i}", "none"),
    "protobuf": (ProtobufTopic, "io.confluent.connect.protobuf.ProtobufConverter", "channel", lambda i: "app", None),
}
STRATEGIES = {  # config value: (the serializers' subject.name.strategy.type, subject of the topic)
    "io.confluent.kafka.serializers.subject.RecordNameStrategy": ("RECORD", lambda topic: "shop.Order"),
    "TopicRecordNameStrategy": ("TOPIC_RECORD", lambda topic: f"{topic}-shop.Order"),
}


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("input_name", sorted(INPUTS))
def test_backward_projection_under_a_record_subject(
    new_topic, spark, s3, dynamodb, connector, unique, input_name, strategy
):
    topic_class, converter, new_field, new_value, projected = INPUTS[input_name]
    serializer_strategy, subject_of = STRATEGIES[strategy]
    other_subject = next(s for k, (_, s) in STRATEGIES.items() if k != strategy)
    topic = f"orders-{unique}"
    with SchemaRegistryServer() as registry:
        # given records of v1 and v2 registered under the strategy's subject, and newest first under the other's
        values = topic_class(registry.url, topic, strategy=serializer_strategy)
        new_topic(topic, 1, [values.value(i, v) for i, v in enumerate(VERSIONS)])
        for schema_id in reversed(registry.subjects[subject_of(topic)]):
            entry = registry.entries[schema_id - 1]
            registry.register(other_subject(topic), entry["schema"], entry["references"], entry["schemaType"])
        # when the sink runs with that strategy and BACKWARD compatibility
        config = connector(
            **{
                "topics": topic,
                "format.class": "ParquetFormat",
                "value.converter": converter,
                "value.converter.schema.registry.url": registry.url,
                "value.converter.value.subject.name.strategy": strategy,
                "schema.compatibility": "BACKWARD",
                "flush.size": 3,
            }
        )
        run_job(config, spark, dynamodb)
    # then a file per version, the older records of the second projected up to v2
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert keys == [f"topics/{topic}/partition=0/{topic}+0+{start:010d}.snappy.parquet" for start in FILES]
    first, second = (pq.read_table(io.BytesIO(s3.get_object(Bucket=BUCKET, Key=k)["Body"].read())) for k in keys)
    assert first.column("id").to_pylist() == FILES[0] and new_field not in first.column_names
    assert second.column("id").to_pylist() == FILES[2]
    assert second.column(new_field).to_pylist() == [new_value(2), projected, projected]
    assert committed_offsets(dynamodb, config) == {0: len(VERSIONS)}
