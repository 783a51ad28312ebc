"""The DLQ replay Lambda called directly against moto (in-process), replaying into the real local broker."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from devtools.producer import create_topic
from lambdas.dlq_replay import handler as replay_lambda
from lambdas.shared.connector_index import ConnectorIndexError
from sink_engine.dlq.letter import DeadLetter
from tests.connector_index import publish_index
from tests.dlq_corpus import read_topic
from tests.lambdas.conftest import BUCKET, TABLE

CONNECTOR = "orders-s3-sink"
INDEX_URI = f"s3://{BUCKET}/_connectors/_index.json"


def letter(topic: str, offset: int, error_class: str, timestamp: int = 1_700_000_000_000) -> DeadLetter:
    return DeadLetter(
        CONNECTOR,
        topic,
        0,
        offset,
        timestamp,
        f"k{offset}".encode(),
        f"v{offset}".encode(),
        (("trace", f"t{offset}".encode()),),
        error_class,
        "VALUE_CONVERTER",
        "bad",
    )


@pytest.fixture
def deployed(stack, table, monkeypatch):
    """A connector whose config and S3 dead letters are in (mocked) S3, reading a topic on the real broker."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    create_topic(stack.bootstrap_servers, topic, 1)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    config = {
        "name": CONNECTOR,
        "config": {
            "topics": topic,
            "bootstrap.servers": stack.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "flush.size": 10,
            "format.class": "JsonFormat",
            "value.converter.schemas.enable": "false",
            "offset.storage.dynamodb.table": table,
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "dlq",
        },
    }
    s3.put_object(Bucket=BUCKET, Key="_connectors/orders.json", Body=json.dumps(config).encode())
    letters = [
        letter(topic, 3, "ConversionError"),
        letter(topic, 5, "PartitioningError"),
        letter(topic, 8, "ConversionError"),
        letter(topic, 9, "ConversionError", 1_800_000_000_000),
    ]
    s3.put_object(
        Bucket=BUCKET,
        Key=f"dlq/{topic}/partition=0/{topic}+0+0000000003.json",
        Body=b"".join(x.to_json_line() for x in letters),
    )
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sink-dlq-replay")
    monkeypatch.setenv(
        "CONNECTORS_URI",
        publish_index(
            INDEX_URI, [{"name": CONNECTOR, "topics": [topic], "config_uri": f"s3://{BUCKET}/_connectors/orders.json"}]
        ),
    )
    replay_lambda._service.cache_clear()
    yield topic
    replay_lambda._service.cache_clear()


def test_dry_run_then_capped_replays_produce_each_record_once(stack, deployed, context):
    topic = deployed
    window = {"to_time": "2026-01-01T00:00:00Z"}  # leaves out the record of January 2027
    # when an operator looks first
    dry = replay_lambda.handler({"connector": CONNECTOR, "dry_run": True, "window": window}, context)
    assert dry["found"] == {"ConversionError": 2, "PartitioningError": 1} and dry["totals"]["replayed"] == 3
    assert read_topic(stack.bootstrap_servers, topic) == []
    # and then replays two at most, then the rest, then repeats the invocation
    first = replay_lambda.handler({"connector": CONNECTOR, "max_records": 2, "window": window}, context)
    rest = replay_lambda.handler({"connector": CONNECTOR, "window": window}, context)
    again = replay_lambda.handler({"connector": CONNECTOR, "window": window}, context)
    # then each record was produced once, with its original key, value, headers, partition and timestamp
    assert first["totals"]["replayed"] == 2 and first["more_remaining"] is True
    assert rest["replayed"] == {"ConversionError": 1} and rest["totals"]["already_replayed"] == 2
    assert again["totals"]["replayed"] == 0 and again["totals"]["already_replayed"] == 3
    records = read_topic(stack.bootstrap_servers, topic)
    assert [(r["key"], r["value"], r["headers"], r["partition"]) for r in records] == [
        (f"k{o}".encode(), f"v{o}".encode(), [("trace", f"t{o}".encode())], 0) for o in (3, 5, 8)
    ]
    # and progress is kept under the connector's key in the offsets table
    items = boto3.client("dynamodb").query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :r)",
        ExpressionAttributeValues={":pk": {"S": CONNECTOR}, ":r": {"S": "REPLAY#"}},
    )["Items"]
    assert sorted((i["sk"]["S"], i["state"]["S"]) for i in items) == [
        (f"REPLAY#{topic}#0#{o:020d}", "replayed") for o in (3, 5, 8)
    ]


def test_filters_by_error_class_and_rejects_a_bad_payload(stack, deployed, context):
    topic = deployed
    done = replay_lambda.handler({"connector": CONNECTOR, "filters": {"error_classes": ["PartitioningError"]}}, context)
    assert done["replayed"] == {"PartitioningError": 1} and done["found"] == {"PartitioningError": 1}
    assert [r["key"] for r in read_topic(stack.bootstrap_servers, topic)] == [b"k5"]
    assert replay_lambda.handler({"connector": "nope"}, context)["field"] == "connector"
    assert (
        replay_lambda.handler({"connector": CONNECTOR, "window": {"from_offset": "x"}}, context)["field"]
        == "from_offset"
    )


def test_a_missing_index_fails_the_invocation_naming_its_uri(aws, monkeypatch, context):
    boto3.client("s3").create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sink-dlq-replay")
    monkeypatch.setenv("CONNECTORS_URI", INDEX_URI)
    replay_lambda._service.cache_clear()
    try:
        with pytest.raises(ConnectorIndexError, match=f"connector index {INDEX_URI}: does not exist"):
            replay_lambda.handler({"connector": CONNECTOR, "dry_run": True}, context)
    finally:
        replay_lambda._service.cache_clear()
