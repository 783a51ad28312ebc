"""Builders of records and options for the field transforms' tests (Kafka's tests use SinkRecord("test", 0, ...))."""

from __future__ import annotations

from typing import Any

from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import CREATE_TIME, TransformRecord


def record(
    key: Any = None,
    value: Any = None,
    key_schema=None,
    value_schema=None,
    *,
    topic: str = "test",
    partition: int = 0,
    offset: int = 0,
    timestamp: int | None = None,
) -> TransformRecord:
    return TransformRecord(
        topic=topic,
        partition=partition,
        offset=offset,
        timestamp=timestamp,
        timestamp_type=CREATE_TIME,
        key=key,
        key_schema=key_schema,
        value=value,
        value_schema=value_schema,
        source_topic=topic,
    )


def options(role: str | None = "value", alias: str = "t", **values: Any) -> TransformOptions:
    """Options given as keyword arguments, `_` standing for `.` in option names (`static_field`)."""
    return TransformOptions(
        f"transforms.{alias}.", {name.replace("_", "."): value for name, value in values.items()}, role
    )
