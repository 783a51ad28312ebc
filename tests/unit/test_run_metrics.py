"""A run's metrics: the figures a RunSummary gives (dead letters, lag after the commits), the PutMetricData payload
built from them (names, units, dimension, timestamp), the SINK_METRICS setting, and a publish that fails without
failing the run."""

from __future__ import annotations

import datetime
import json
import logging

import boto3
import pytest
from botocore.stub import Stubber

from sink_engine import events
from sink_engine.driver.job import RunSummary
from sink_engine.errors import SinkError
from sink_engine.model import ClosedFile, PartitionRange, TaskResult, TopicPartition
from sink_engine.run.metrics import (
    DIMENSION,
    METRICS,
    NAMESPACE,
    MetricsPublisher,
    RunMetrics,
    metric_data,
    publisher_from_environment,
)

FIGURES = RunMetrics(
    records=600,
    bytes=81_234,
    files=6,
    dead_letters=3,
    dropped=7,
    seconds=12.5,
    lag=150,
    executors=3,
    tasks_in_driver=False,
)
AT_MS = 1_764_000_000_123
EXPECTED = {  # metric -> (value, unit)
    "RecordsWritten": (600, "Count"),
    "BytesWritten": (81_234, "Bytes"),
    "FilesWritten": (6, "Count"),
    "DeadLetters": (3, "Count"),
    "RecordsDropped": (7, "Count"),
    "RunSeconds": (12.5, "Seconds"),
    "Lag": (150, "Count"),
    "Executors": (3, "Count"),
    "TasksInDriver": (0, "Count"),
}


def _file(start: int, count: int, size: int) -> ClosedFile:
    return ClosedFile(f"k{start}", "partition=0", start, start + count - 1, count, size)


def test_every_figure_is_one_datum_with_its_unit_the_connector_dimension_and_the_run_time():
    # when the payload of a run's figures is built
    data = metric_data("orders", FIGURES, AT_MS)
    # then each metric appears once, with its value and unit, for the connector, at the run's time
    assert {d["MetricName"]: (d["Value"], d["Unit"]) for d in data} == EXPECTED
    assert len(data) == len(METRICS) == len(EXPECTED)
    for datum in data:
        assert datum["Dimensions"] == [{"Name": DIMENSION, "Value": "orders"}]
        assert datum["Timestamp"] == datetime.datetime(2025, 11, 24, 16, 0, 0, 123000, datetime.UTC)


def test_the_payload_is_what_cloudwatch_accepts():
    # given a real CloudWatch client whose request is checked against the service model
    client = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_response(
            "put_metric_data", {}, {"Namespace": NAMESPACE, "MetricData": metric_data("orders", FIGURES, AT_MS)}
        )
        # when the publisher sends it, then the stub took exactly that request (a bad parameter raises here)
        MetricsPublisher(client).publish("orders", FIGURES, AT_MS)
        stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    "committed_next, expected_lag",
    [
        ({0: 100, 1: 40}, (250 - 100) + (90 - 40) + (30 - 30)),  # both ranges committed; partition 2 had nothing new
        ({0: 100}, (250 - 100) + (90 - 0) + 0),  # partition 1 committed nothing: its lag counts from its start
        ({}, 250 + 90 + 0),
    ],
)
def test_lag_is_each_partitions_end_offset_less_its_committed_offset(committed_next, expected_lag):
    # given ranges capped at 100 records, end offsets 250, 90 and 30, and what the run committed
    ranges = [
        PartitionRange("t", 0, 0, 100, None),
        PartitionRange("t", 1, 0, 90, None),
        PartitionRange("t", 2, 30, 30, 30),
    ]
    results = [TaskResult(ranges[p], next_offset=n) for p, n in committed_next.items()]
    summary = RunSummary(
        ranges,
        results,
        committed=results,
        end_offsets={TopicPartition("t", p): end for p, end in enumerate((250, 90, 30))},
    )
    # then the lag is what is left in Kafka after those commits
    assert summary.lag == expected_lag == summary.metrics().lag


def test_written_figures_count_every_closed_file_and_dead_letters_only_committed_ones():
    # given two ranges: one committed with dead letters, one stopped on an error before committing its letters
    ranges = [PartitionRange("t", 0, 0, 10, None), PartitionRange("t", 1, 0, 10, None)]
    done = TaskResult(
        ranges[0],
        10,
        files=[_file(0, 4, 100), _file(4, 4, 120)],
        dead_letters={"ConversionError": 2},
        records_dropped=1,
    )
    stopped = TaskResult(ranges[1], 0, error="boom", dead_letters={"ConversionError": 5})
    summary = RunSummary(
        ranges, [done, stopped], committed=[done], seconds=3.25, end_offsets={r.tp: 10 for r in ranges}
    )
    # then
    assert summary.metrics() == RunMetrics(
        records=8, bytes=220, files=2, dead_letters=2, dropped=1, seconds=3.25, lag=10
    )


@pytest.mark.parametrize(
    "executors, expected", [((), (0, False)), (("driver",), (1, True)), (("0", "1", "3"), (3, False))]
)
def test_where_the_tasks_ran_is_a_figure_of_the_run(executors, expected):
    # given the executors Spark's status store named for the run's tasks ("driver": a local master)
    ranges = [PartitionRange("t", 0, 0, 10, None)]
    summary = RunSummary(ranges, [TaskResult(ranges[0], 10)], executors=executors)
    # then the run's figures count them, and say whether any task ran inside the driver
    figures = summary.metrics()
    assert (figures.executors, figures.tasks_in_driver) == expected


def test_a_run_that_read_nothing_has_all_zero_figures():
    ranges = [PartitionRange("t", 0, 40, 40, 40)]
    summary = RunSummary(ranges, [], end_offsets={ranges[0].tp: 40})
    assert summary.metrics() == RunMetrics(0, 0, 0, 0, 0, 0.0, 0)


@pytest.mark.parametrize(
    "environ, publishes", [({}, False), ({"SINK_METRICS": ""}, False), ({"SINK_METRICS": "cloudwatch"}, True)]
)
def test_only_sink_metrics_cloudwatch_publishes(environ, publishes):
    assert isinstance(publisher_from_environment(environ, "us-east-1"), MetricsPublisher) is publishes


@pytest.mark.parametrize("value", ["emf", "CloudWatch", "yes"])
def test_another_setting_is_refused_naming_the_variable(value):
    with pytest.raises(SinkError, match=rf"SINK_METRICS='{value}': the one value is 'cloudwatch'"):
        publisher_from_environment({"SINK_METRICS": value}, "us-east-1")


def test_a_publish_cloudwatch_refuses_is_logged_and_does_not_raise(caplog):
    client = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub, caplog.at_level(logging.WARNING, logger=events.logger.name):
        stub.add_client_error("put_metric_data", "AccessDenied", "not authorized to perform cloudwatch:PutMetricData")
        MetricsPublisher(client).publish("orders", FIGURES, AT_MS)
    (logged,) = [json.loads(r.getMessage()) for r in caplog.records]
    assert logged["event"] == events.METRICS_PUBLISH_FAILED and logged["connector"] == "orders"
    assert "AccessDenied" in logged["error"]
