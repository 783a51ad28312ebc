"""errors.tolerance=all: bad records go to the dead-letter queue exactly once, good ones land exactly once."""

from __future__ import annotations

import base64
import json

import pytest
from confluent_kafka.admin import AdminClient

from sink_engine import cli
from sink_engine.driver.job import TaskFailedError, run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import corpus, produce_samples, raw_config, read_dlq_s3, read_topic
from tests.runs import committed, crash_at, past_the_lease
from tests.s3_reader import landed_records, list_keys


def expected_bad(samples_by_partition: dict) -> list[tuple]:
    return sorted(
        (p, offset, s.error_class, s.key, s.value, tuple(s.headers))
        for p, samples in samples_by_partition.items()
        for offset, s in enumerate(samples)
        if s.error_class
    )


def good_docs(samples_by_partition: dict) -> list[dict]:
    return sorted(
        (json.loads(s.value) for samples in samples_by_partition.values() for s in samples if s.error_class is None),
        key=lambda d: (d["p"], d["n"]),
    )


def test_corpus_to_s3_prefix(stack, new_topic, spark, s3, dynamodb, connector, tmp_path, capsys):
    # given two partitions of good records between malformed JSON, tombstones, non-UTF-8 keys and values,
    # headers and records of several MB
    config = connector(
        **{
            "flush.size": 1,
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "dlq",
            "errors.log.enable": "true",
        }
    )
    topic = new_topic(config, 2)
    samples = {p: corpus(p) for p in (0, 1)}
    produce_samples(stack.bootstrap_servers, topic, samples)
    # when one run, from the command line
    config_file = tmp_path / "c.json"
    config_file.write_text(json.dumps({"name": config.name, "config": raw_config(config)}))
    assert cli.main(["run", "--config", str(config_file)]) == 0
    # then every good record landed once, and the run went past every bad one
    assert sorted(landed_records(s3, topic), key=lambda d: (d["p"], d["n"])) == good_docs(samples)
    assert {p: c.next_offset for p, c in committed(dynamodb, config).items()} == {0: 11, 1: 11}
    # and every bad one is in the dead-letter objects once, with its key, value, headers and error
    lines = read_dlq_s3(s3, BUCKET, f"dlq/{topic}/")
    assert sorted(
        (
            d["partition"],
            d["offset"],
            d["error"]["class"],
            d["key"],
            d["value"],
            tuple((n, None if v is None else base64.b64decode(v)) for n, v in d["headers"]),
        )
        for d in lines
    ) == expected_bad(samples)
    assert all(d["connector"] == config.name and d["topic"] == topic and d["error"]["message"] for d in lines)
    assert list_keys(s3, BUCKET, f"dlq/{topic}/") == [
        f"dlq/{topic}/partition={p}/{topic}+{p}+0000000001.json" for p in (0, 1)
    ]
    # and the counts by error class are in the run's summary, the committed offsets and the status
    assert "dead letters: ConversionError=8, NullValueError=2" in capsys.readouterr().out
    assert [c.dead_letters for c in committed(dynamodb, config).values()] == [
        {"ConversionError": 4, "NullValueError": 1}
    ] * 2
    assert cli.main(["status", "--config", str(config_file)]) == 0
    assert capsys.readouterr().out.count("dead letters: ConversionError=4, NullValueError=1") == 2


def test_corpus_to_topic_with_context_headers(stack, new_topic, spark, s3, dynamodb, connector, unique):
    dlq_topic = f"dlq-{unique}"
    config = connector(
        **{
            "flush.size": 1,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq_topic,
            "errors.deadletterqueue.topic.replication.factor": 1,
            "errors.deadletterqueue.context.headers.enable": "true",
        }
    )
    topic = new_topic(config, 2)
    samples = {p: corpus(p) for p in (0, 1)}
    produce_samples(stack.bootstrap_servers, topic, samples)
    run_job(config, spark, dynamodb)
    assert sorted(landed_records(s3, topic), key=lambda d: (d["p"], d["n"])) == good_docs(samples)
    records = read_topic(stack.bootstrap_servers, dlq_topic)
    found = []
    for r in records:
        headers = dict(r["headers"])
        original = tuple((n, v) for n, v in r["headers"] if not n.startswith("__"))
        found.append(
            (
                int(headers["__connect.errors.partition"]),
                int(headers["__connect.errors.offset"]),
                headers["__connect.errors.exception.class.name"].decode().rsplit(".", 1)[1],
                r["key"],
                r["value"],
                original,
            )
        )
        assert headers["__connect.errors.topic"] == topic.encode()
        assert headers["__connect.errors.connector.name"] == config.name.encode()
        assert headers["__connect.errors.stage"] in (b"VALUE_CONVERTER", b"TASK_PUT")
        assert headers["__connect.errors.exception.message"]
        assert b"Error" in headers["__connect.errors.exception.stacktrace"]
    assert sorted(found) == expected_bad(samples)


@pytest.mark.parametrize("destination", ["topic", "s3"])
def test_crash_before_commit_then_rerun_sends_no_dead_letter_twice(
    stack, new_topic, spark, s3, dynamodb, connector, unique, destination
):
    dlq_topic = f"dlq-{unique}"
    where = (
        {"errors.deadletterqueue.topic.name": dlq_topic, "errors.deadletterqueue.topic.replication.factor": 1}
        if destination == "topic"
        else {"errors.deadletterqueue.s3.prefix": "dead/letters"}
    )
    config = connector(**{"flush.size": 3, "errors.tolerance": "all", "sink.lease.duration.ms": 1500, **where})
    topic = new_topic(config, 1)
    samples = {0: corpus(0)}
    produce_samples(stack.bootstrap_servers, topic, samples)
    # given a run that dies after its uploads and dead letters, before its commit
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    assert committed(dynamodb, config) == {}
    # when more records arrive (a good one and a bad one) and the job runs again past the dead run's lease
    more = corpus(0)[:2]
    produce_samples(stack.bootstrap_servers, topic, {0: more})
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then each bad record before the commit point is in the dead-letter queue once; the one after the
    # waiting record (offset 11, an open file of flush.size 3) waits with it
    assert _dead_letter_offsets(stack, s3, destination, dlq_topic, topic) == [1, 3, 5, 7, 9]
    assert sorted(d["n"] for d in landed_records(s3, topic)) == [0, 1, 2, 3, 4, 5]
    assert committed(dynamodb, config)[0].next_offset == 11
    # and when the waiting file fills, the later dead letter follows, once
    produce_samples(stack.bootstrap_servers, topic, {0: corpus(0)[2:5]})
    run_job(config, spark, dynamodb)
    assert _dead_letter_offsets(stack, s3, destination, dlq_topic, topic) == [1, 3, 5, 7, 9, 12, 14]
    assert committed(dynamodb, config)[0].next_offset == 16


def test_tolerance_none_fails_naming_the_record_and_commits_nothing_past_it(
    stack, new_topic, spark, s3, dynamodb, connector
):
    config = connector(**{"flush.size": 1, "errors.deadletterqueue.s3.prefix": "dlq-none"})
    topic = new_topic(config, 1)
    produce_samples(stack.bootstrap_servers, topic, {0: corpus(0)})
    with pytest.raises(TaskFailedError, match=rf"record {topic}-0@1: value is not valid JSON"):
        run_job(config, spark, dynamodb)
    assert committed(dynamodb, config)[0].next_offset == 1
    assert list_keys(s3, BUCKET, f"dlq-none/{topic}/") == []


def _dead_letter_offsets(stack, s3, destination: str, dlq_topic: str, topic: str) -> list[int]:
    if destination == "topic":
        return sorted(
            json.loads(dict(r["headers"])["__sink_engine.dlq.source"])["offset"]
            for r in read_topic(stack.bootstrap_servers, dlq_topic)
        )
    return sorted(d["offset"] for d in read_dlq_s3(s3, BUCKET, f"dead/letters/{topic}/"))


@pytest.mark.parametrize("fmt, extension", [("ParquetFormat", ".snappy.parquet"), ("AvroFormat", ".avro")])
def test_json_that_a_columnar_file_cannot_hold_is_dead_lettered_when_it_arrives(
    stack, new_topic, spark, s3, dynamodb, connector, fmt, extension
):
    import io

    import fastavro
    import pyarrow.parquet as pq

    from tests.dlq_corpus import Sample, produce_samples, read_dlq_s3

    # given schemaless JSON for Parquet or Avro output with values that are not objects among objects
    config = connector(
        **{
            "flush.size": 3,
            "format.class": fmt,
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "format-dlq",
        }
    )
    topic = new_topic(config, 1)
    values = [b'{"n": 0}', b"[1, 2]", b'{"n": 1}', b'"text"', b'{"n": 2}', b"7", b'{"n": 3}']
    produce_samples(stack.bootstrap_servers, topic, {0: [Sample(b"k", v) for v in values]})
    run_job(config, spark, dynamodb)
    # then the objects of the file went in, the others went to the dead-letter queue as FormatError
    [key] = list_keys(s3, BUCKET, f"topics/{topic}/")
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    rows = (
        pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()
        if fmt == "ParquetFormat"
        else list(fastavro.reader(io.BytesIO(body)))
    )
    assert key.endswith(extension) and rows == [{"n": 0}, {"n": 1}, {"n": 2}]
    letters = read_dlq_s3(s3, BUCKET, f"format-dlq/{topic}/")
    assert [(d["offset"], d["error"]["class"], d["value"]) for d in letters] == [
        (1, "FormatError", b"[1, 2]"),
        (3, "FormatError", b'"text"'),
        (5, "FormatError", b"7"),
    ]
    # and the commit is past the dead letters of the closed file; {"n": 3} waits in the tail
    assert committed(dynamodb, config)[0].next_offset == 6


def test_a_dead_letter_topic_needing_more_brokers_than_the_cluster_has_names_the_key(
    stack, new_topic, spark, dynamodb, connector, unique
):
    """Kafka, and so MSK, refuses a topic whose replication factor exceeds its brokers (as the local
    broker does); the engine checks first and names the key: the default 3 on the local single broker."""
    dlq_topic = f"dlq-{unique}"
    config = connector(**{"flush.size": 1, "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq_topic})
    topic = new_topic(config, 1)
    produce_samples(stack.bootstrap_servers, topic, {0: corpus(0)})
    with pytest.raises(
        TaskFailedError,
        match=r"config key 'errors.deadletterqueue.topic.replication.factor': 3 is "
        r"more than the 1 broker\(s\) of the cluster",
    ):
        run_job(config, spark, dynamodb)
    assert committed(dynamodb, config)[0].next_offset == 0  # its dead letters were not sent: nothing is committed
    assert dlq_topic not in AdminClient({"bootstrap.servers": stack.bootstrap_servers}).list_topics(timeout=10).topics
