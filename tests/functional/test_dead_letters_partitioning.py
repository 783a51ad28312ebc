"""Dead letters of partitioning: a missing partition field and unreadable or absurd record-field timestamps."""

from __future__ import annotations

import json

import pytest

from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import Sample, produce_samples, read_dlq_s3
from tests.runs import committed
from tests.s3_reader import list_keys, read_json_lines

TIME_BASED = {
    "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
    "path.format": "'year'=YYYY/'month'=MM",
    "partition.duration.ms": 3_600_000,
    "locale": "en",
    "timezone": "UTC",
    "timestamp.extractor": "RecordField",
    "timestamp.field": "ts",
}
FIELD = {
    "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
    "partition.field.name": "region",
}


def doc(**fields) -> bytes:
    return json.dumps(fields).encode()


@pytest.mark.parametrize(
    "settings, samples",
    [
        (
            FIELD,
            [
                Sample(b"a", doc(n=0, region="eu")),
                Sample(b"b", doc(n=1), error_class="FieldError"),
                Sample(b"c", doc(n=2, region="us")),
            ],
        ),
        (
            TIME_BASED,
            [
                Sample(b"a", doc(n=0, ts=1_700_000_000_000)),
                Sample(b"b", doc(n=1, ts="yesterday"), error_class="FieldError"),
                Sample(b"c", doc(n=2), error_class="FieldError"),
                Sample(b"e", doc(n=3, ts="2023-11-14T22:13:20Z")),
            ],
        ),
        pytest.param(
            TIME_BASED,
            [Sample(b"a", doc(n=0, ts=1_700_000_000_000)), Sample(b"d", doc(n=1, ts=10**20), error_class="FieldError")],
        ),
    ],
    ids=["missing-field", "unreadable-timestamps", "absurd-timestamp"],
)
def test_partitioning_failures_are_dead_lettered(stack, new_topic, spark, s3, dynamodb, connector, settings, samples):
    config = connector(
        **{"flush.size": 1, "errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "part-dlq", **settings}
    )
    topic = new_topic(config, 1)
    produce_samples(stack.bootstrap_servers, topic, {0: samples})
    run_job(config, spark, dynamodb)
    landed = sorted(e["n"] for k in list_keys(s3, BUCKET, f"topics/{topic}/") for e in read_json_lines(s3, BUCKET, k))
    assert landed == [json.loads(s.value)["n"] for s in samples if s.error_class is None]
    letters = read_dlq_s3(s3, BUCKET, f"part-dlq/{topic}/")
    assert [(d["offset"], d["error"]["class"], d["error"]["stage"]) for d in letters] == [
        (i, s.error_class, "TASK_PUT") for i, s in enumerate(samples) if s.error_class
    ]
    assert committed(dynamodb, config)[0].next_offset == len(samples)
