"""Each run's metrics reach CloudWatch (moto's server) once, with the figures of what landed in S3 and what was left
in Kafka: for a run that wrote, one that read nothing new, and one that failed after committing some ranges; and
nothing is published without SINK_METRICS=cloudwatch."""

from __future__ import annotations

import datetime
import json

import boto3
import pytest

from devtools.producer import produce
from sink_engine import cli
from sink_engine.driver.job import TaskFailedError, run_job
from sink_engine.run.metrics import DIMENSION, METRICS, NAMESPACE, publisher_from_environment
from tests.conftest import BUCKET, TABLE
from tests.runs import committed_offsets

CLOUDWATCH = {"SINK_METRICS": "cloudwatch"}


def _published(connector: str) -> dict[str, list[tuple[float, float, str]]]:
    """Metric name -> [(sum, sample count, unit)] per minute, over the last and next hour, for the connector."""
    now = datetime.datetime.now(datetime.UTC)
    client = boto3.client("cloudwatch")
    found = {}
    for name in METRICS:
        points = client.get_metric_statistics(
            Namespace=NAMESPACE,
            MetricName=name,
            Dimensions=[{"Name": DIMENSION, "Value": connector}],
            StartTime=now - datetime.timedelta(hours=1),
            EndTime=now + datetime.timedelta(hours=1),
            Period=60,
            Statistics=["Sum", "SampleCount"],
        )["Datapoints"]
        if points:
            found[name] = [(p["Sum"], p["SampleCount"], p["Unit"]) for p in points]
    return found


def _landed(s3, topic: str) -> tuple[int, int]:
    """(objects, bytes) under the topic's prefix."""
    objects = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"topics/{topic}/").get("Contents", [])
    return len(objects), sum(o["Size"] for o in objects)


def _one_run(published: dict) -> dict[str, float]:
    """The values of a single datum per metric (fails on more than one)."""
    assert sorted(published) == sorted(METRICS)
    for name, points in published.items():
        assert [count for _, count, _ in points] == [1.0], name
    return {name: points[0][0] for name, points in published.items()}


def test_a_run_publishes_what_landed_and_what_it_left(new_topic, spark, s3, dynamodb, connector):
    # given 3 partitions of 250 records, flush.size 100 and at most 220 records per partition and run
    config = connector(**{"flush.size": 100, "sink.run.max.records.per.partition": 220})
    topic = new_topic(config, 3, events=750)
    # when one run publishes its metrics
    summary = run_job(config, spark, dynamodb, metrics=publisher_from_environment(CLOUDWATCH, "us-east-1"))
    # then CloudWatch holds one datum per metric: the files, bytes and records that landed, and the lag left
    values = _one_run(_published(config.name))
    files, size = _landed(s3, topic)
    assert (values["FilesWritten"], values["BytesWritten"], values["RecordsWritten"]) == (files, size, 600)
    assert files == 6 and size > 0
    assert committed_offsets(dynamodb, config) == {0: 200, 1: 200, 2: 200}
    assert values["Lag"] == 3 * (250 - 200)
    assert (values["DeadLetters"], values["RecordsDropped"]) == (0, 0)
    assert values["RunSeconds"] == pytest.approx(summary.seconds) and values["RunSeconds"] > 0
    units = {name: points[0][2] for name, points in _published(config.name).items()}
    assert units == {name: unit for name, (_, unit) in METRICS.items()}


def test_a_run_with_nothing_new_publishes_zeros_and_the_same_lag(new_topic, spark, dynamodb, connector):
    # given a partition whose 60 records were all written by an earlier run (flush.size 50: 10 are left)
    config = connector(**{"flush.size": 50})
    new_topic(config, 1, events=60)
    run_job(config, spark, dynamodb)
    # when a second run, with metrics, finds nothing to close
    run_job(config, spark, dynamodb, metrics=publisher_from_environment(CLOUDWATCH, "us-east-1"))
    # then it publishes once: nothing written, 10 records left (read by one task, in the driver: local Spark)
    values = _one_run(_published(config.name))
    assert {name: v for name, v in values.items() if name != "RunSeconds"} == {
        "RecordsWritten": 0,
        "BytesWritten": 0,
        "FilesWritten": 0,
        "DeadLetters": 0,
        "RecordsDropped": 0,
        "Lag": 10,
        "Executors": 1,
        "TasksInDriver": 1,
    }


def test_a_run_failing_after_commits_publishes_what_it_committed(stack, new_topic, spark, s3, dynamodb, connector):
    # given partition 0 with 10 good records, partition 1 with a record that is not JSON at its 3rd offset
    config = connector(**{"flush.size": 2})
    topic = new_topic(config, 2)
    good = [json.dumps({"n": i}).encode() for i in range(10)]
    values = [v for pair in zip(good, [*good[:2], b"{not json", *good[3:]]) for v in pair]
    produce(stack.bootstrap_servers, topic, values, 2)
    # when the run stops on that record
    with pytest.raises(TaskFailedError):
        run_job(config, spark, dynamodb, metrics=publisher_from_environment(CLOUDWATCH, "us-east-1"))
    # then its metrics were published all the same: the 6 files that landed, and the 8 records left in partition 1
    assert committed_offsets(dynamodb, config) == {0: 10, 1: 2}
    published = _one_run(_published(config.name))
    files, size = _landed(s3, topic)
    assert (published["FilesWritten"], published["BytesWritten"], published["RecordsWritten"]) == (files, size, 12)
    assert files == 6 and published["Lag"] == 8


def test_the_cli_publishes_only_with_sink_metrics_and_prints_the_same(
    stack, new_topic, unique, tmp_path, monkeypatch, capsys
):
    # given two connectors of 100 records each
    paths = {}
    for setting in ("off", "on"):
        topic = f"cli-metrics-{setting}-{unique}"
        new_topic(topic, 1, events=100)
        paths[setting] = tmp_path / f"{setting}.json"
        paths[setting].write_text(
            json.dumps(
                {
                    "name": topic,
                    "config": {
                        "topics": topic,
                        "bootstrap.servers": stack.bootstrap_servers,
                        "s3.bucket.name": BUCKET,
                        "s3.region": "us-east-1",
                        "flush.size": 50,
                        "format.class": "JsonFormat",
                        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                        "value.converter.schemas.enable": "false",
                        "offset.storage.dynamodb.table": TABLE,
                    },
                }
            )
        )
    # when one runs without the setting and one with it
    monkeypatch.delenv("SINK_METRICS", raising=False)
    assert cli.main(["run", "--config", str(paths["off"])]) == 0
    off = capsys.readouterr().out
    monkeypatch.setenv("SINK_METRICS", "cloudwatch")
    assert cli.main(["run", "--config", str(paths["on"])]) == 0
    on = capsys.readouterr().out
    # then only the second published, and both printed the same kind of lines
    assert _published(f"cli-metrics-off-{unique}") == {}
    assert _one_run(_published(f"cli-metrics-on-{unique}"))["RecordsWritten"] == 100
    assert [line.split()[0] for line in off.splitlines()] == [line.split()[0] for line in on.splitlines()]
