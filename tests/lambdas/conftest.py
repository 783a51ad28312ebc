"""Lambda handlers called directly against moto (in-process `mock_aws`), with AWS's sample MSK event shape."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from sink_engine.offsets import ensure_table

# Powertools reads these when a handler module is imported, as Lambda sets them before it imports the handler.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "SinkEngine")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")

EVENTS = Path(__file__).resolve().parents[1] / "events"
REGION = "eu-west-1"
TABLE = "sink-offsets-test"
BUCKET = "sink-lake-test"


# A Monday 10:03 UTC: the trigger tests' schedule boundaries fall at 10:00 and 10:10.
T0 = int(datetime(2026, 3, 2, 10, 3, tzinfo=UTC).timestamp() * 1000)


class Clock:
    """A settable clock in epoch milliseconds, as the trigger's services take one."""

    def __init__(self, now_ms: int = T0):
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@dataclass
class LambdaContext:
    function_name: str = "test-function"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:test-function"
    aws_request_id: str = "6f5b1c3e-0000-4000-8000-000000000000"


@pytest.fixture
def context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture
def aws(monkeypatch):
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_NAMESPACE": "SinkEngine",
        "POWERTOOLS_DEV": "0",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield


@pytest.fixture
def table(aws) -> str:
    ensure_table(boto3.client("dynamodb"), TABLE)
    return TABLE


def msk_event(records: list[tuple[str, int, int, int]]) -> dict:
    """AWS's sample MSK event (tests/events/msk_event.json) carrying (topic, partition, offset, timestamp) records."""
    sample = json.loads((EVENTS / "msk_event.json").read_text())
    template = next(iter(sample["records"].values()))[0]
    grouped: dict[str, list] = {}
    for topic, partition, offset, ts in records:
        record = copy.deepcopy(template)
        record.update(topic=topic, partition=partition, offset=offset, timestamp=ts)
        grouped.setdefault(f"{topic}-{partition}", []).append(record)
    return {**sample, "records": grouped}
