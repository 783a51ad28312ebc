"""Records and options for the tests of the TimestampConverter, header, tombstone, Drop and Debezium transforms."""

from __future__ import annotations

from typing import Any

from sink_engine.convert.schema import Schema
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import CREATE_TIME, Header, TransformRecord


def record(
    key: Any = None,
    value: Any = None,
    key_schema: Schema | None = None,
    value_schema: Schema | None = None,
    headers: tuple[Header, ...] = (),
    topic: str = "topic",
    offset: int = 0,
) -> TransformRecord:
    return TransformRecord(
        topic=topic,
        partition=0,
        offset=offset,
        timestamp=0,
        timestamp_type=CREATE_TIME,
        key=key,
        key_schema=key_schema,
        value=value,
        value_schema=value_schema,
        headers=headers,
        source_topic=topic,
    )


def options(role: str | None = None, alias: str = "t", **values: Any) -> TransformOptions:
    """Options as keyword arguments, `_` standing for `.` in option names (`target_type`)."""
    return TransformOptions(
        f"transforms.{alias}.", {name.replace("_", "."): value for name, value in values.items()}, role
    )
