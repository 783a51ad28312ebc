"""Records for the transform tests."""

from __future__ import annotations

from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import CREATE_TIME, Header, TransformRecord


def record(topic: str = "orders", value=None, key=None, timestamp: int | None = 0, headers=(), **changes):
    return TransformRecord(
        topic,
        0,
        0,
        timestamp,
        CREATE_TIME,
        key,
        None,
        value,
        None,
        tuple(Header(name, data) for name, data in headers),
        topic,
    ).with_changes(**changes)


def options(alias: str = "t", prefix: str = "transforms.", **values) -> TransformOptions:
    return TransformOptions(f"{prefix}{alias}.", {k.replace("_", "."): v for k, v in values.items()})
