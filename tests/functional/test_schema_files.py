"""Several schemas in one topic without small files (`sink.schema.files=separate`, the default under
schema.compatibility=NONE), end to end (real broker, moto, local Spark, the test registry): three Avro event types
interleaved under RecordNameStrategy and two interleaved versions of a JsonConverter envelope land in files of
flush.size records of one schema each; every record lands once, across runs that stop anywhere, and a run that
dies after its uploads is redone with the same keys and bytes."""

from __future__ import annotations

import io
import json

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.producer import produce
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.runs import committed_offsets, rewritten_after_crash
from tests.s3_reader import list_keys, read_json_lines
from tests.schema_registry_server import SchemaRegistryServer

EVENTS = {  # record name: its fields besides id
    "shop.Order": [{"name": "item", "type": "string"}],
    "shop.Refund": [
        {"name": "amount", "type": "long"},
        {"name": "reason", "type": ["null", "string"], "default": None},
    ],
    "shop.Click": [{"name": "page", "type": "string"}, {"name": "x", "type": "int"}],
}
FLUSH = 4
COUNT = 38  # 12 full files of 3 types round-robin, and two records left open (offsets 36, 37)


def avro_schema(full_name: str) -> dict:
    namespace, name = full_name.rsplit(".", 1)
    return {
        "type": "record",
        "name": name,
        "namespace": namespace,
        "fields": [{"name": "id", "type": "int"}] + EVENTS[full_name],
    }


def event(i: int) -> tuple[str, dict]:
    """Record i: the event types in turn."""
    name = sorted(EVENTS)[i % 3]
    fields = {
        "shop.Order": {"item": f"i{i}"},
        "shop.Refund": {"amount": i * 10, "reason": None if i % 2 else "r"},
        "shop.Click": {"page": f"/p{i}", "x": i},
    }[name]
    return name, {"id": i, **fields}


def read_rows(s3, key: str) -> list[dict]:
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    if key.endswith(".parquet"):
        return pq.read_table(io.BytesIO(body)).to_pylist()
    return list(fastavro.reader(io.BytesIO(body)))


@pytest.fixture
def event_topic(stack, new_topic, connector, unique):
    """A topic of COUNT records of three Avro event types, registered under RecordNameStrategy subjects; yields a
    config builder for it."""
    topic = f"events-{unique}"
    with SchemaRegistryServer() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        context = SerializationContext(topic, MessageField.VALUE)
        serializers = {
            name: AvroSerializer(client, json.dumps(avro_schema(name)), conf={"subject.name.strategy.type": "RECORD"})
            for name in EVENTS
        }
        new_topic(topic, 1)
        produce(
            stack.bootstrap_servers,
            topic,
            [serializers[name](value, context) for name, value in map(event, range(COUNT))],
            1,
        )
        assert sorted(registry.subjects) == sorted(EVENTS)

        def build(**overrides):
            return connector(
                **{
                    "topics": topic,
                    "value.converter": "io.confluent.connect.avro.AvroConverter",
                    "value.converter.schema.registry.url": registry.url,
                    "value.converter.value.subject.name.strategy": "RecordNameStrategy",
                    "flush.size": FLUSH,
                    **overrides,
                }
            )

        yield topic, build


@pytest.mark.parametrize("fmt", ["ParquetFormat", "AvroFormat"])
def test_interleaved_event_types_fill_files_of_their_own(spark, s3, dynamodb, event_topic, fmt):
    topic, build = event_topic
    config = build(**{"format.class": fmt})
    # when the sink runs (schema.compatibility NONE, files separated by schema by default)
    run_job(config, spark, dynamodb)
    # then every file holds flush.size records of one event type, in offset order, named by its first offset
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    starts = [int(k.rsplit("+", 1)[1].split(".")[0]) for k in keys]
    assert starts == [0, 1, 2, 12, 13, 14, 24, 25, 26]
    for start, key in zip(starts, keys):
        rows = read_rows(s3, key)
        assert [row["id"] for row in rows] == [start + 3 * j for j in range(FLUSH)]
        assert rows == [event(row["id"])[1] for row in rows]
    # and every record lands once; 36 and 37, in open files, are read again by the next run
    assert sorted(row["id"] for key in keys for row in read_rows(s3, key)) == list(range(36))
    assert committed_offsets(dynamodb, config) == {0: 36}


def test_the_connectors_rotation_is_kept_with_rotate(spark, s3, dynamodb, event_topic):
    topic, build = event_topic
    run_job(build(**{"format.class": "AvroFormat", "sink.schema.files": "rotate"}), spark, dynamodb)
    # then a file per record: each one's schema differs from the one before
    assert len(list_keys(s3, BUCKET, f"topics/{topic}/")) == COUNT - 1


def test_runs_that_stop_anywhere_write_every_record_once(spark, s3, dynamodb, event_topic):
    topic, build = event_topic
    # given runs of 25 records (more than 2 x flush.size x 3 types): each commits where no file was open
    config = build(**{"format.class": "ParquetFormat", "sink.run.max.records.per.partition": 25})
    commits = []
    for _ in range(3):
        run_job(config, spark, dynamodb)
        commits.append(committed_offsets(dynamodb, config)[0])
    # then the runs went on from there, and wrote the same files as one run: every record once
    assert commits == [24, 36, 36]
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert len(keys) == 9
    assert sorted(row["id"] for key in keys for row in read_rows(s3, key)) == list(range(36))


@pytest.mark.parametrize("fmt", ["ParquetFormat", "AvroFormat"])
def test_a_crashed_run_is_redone_with_the_same_keys_and_bytes(spark, s3, dynamodb, event_topic, fmt):
    topic, build = event_topic
    config = build(**{"format.class": fmt, "sink.lease.duration.ms": 1500})
    crashed, rerun = rewritten_after_crash(config, spark, dynamodb, s3, f"topics/{topic}/")
    assert len(crashed) == 9 and rerun == crashed
    assert committed_offsets(dynamodb, config) == {0: 36}


def envelope(i: int) -> bytes:
    """Record i: version 1 of the envelope schema for even offsets, version 2 (one more field) for odd ones."""
    version = 1 + i % 2
    fields = [{"field": "id", "type": "int32"}] + ([{"field": "note", "type": "string"}] if version == 2 else [])
    payload = {"id": i, **({"note": f"n{i}"} if version == 2 else {})}
    return orjson.dumps(
        {"schema": {"type": "struct", "name": "Ev", "version": version, "fields": fields}, "payload": payload}
    )


def test_two_interleaved_versions_go_to_files_of_their_own(new_topic, spark, s3, dynamodb, connector):
    # given JsonConverter envelopes alternating two versions of one schema
    config = connector(**{"value.converter.schemas.enable": "true", "flush.size": 5, "sink.lease.duration.ms": 1500})
    topic = new_topic(config, 1, [envelope(i) for i in range(23)])
    # when the sink runs, dying after its uploads once
    crashed, rerun = rewritten_after_crash(config, spark, dynamodb, s3, f"topics/{topic}/")
    # then each version fills files of flush.size records, the same keys and bytes after the crash
    assert rerun == crashed
    keys = list_keys(s3, BUCKET, f"topics/{topic}/")
    assert [k.rsplit("+", 1)[1] for k in keys] == [f"{s:010d}.json" for s in (0, 1, 10, 11)]
    rows = {int(k.rsplit("+", 1)[1][:10]): read_json_lines(s3, BUCKET, k) for k in keys}
    assert rows[0] == [{"id": i} for i in range(0, 10, 2)]
    assert rows[11] == [{"id": i, "note": f"n{i}"} for i in range(11, 20, 2)]
    assert committed_offsets(dynamodb, config) == {0: 20}
