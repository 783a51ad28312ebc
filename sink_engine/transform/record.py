"""The record a single message transform (SMT) sees: Kafka Connect's ConnectRecord, in this engine's value model.

Values and keys follow convert/schema.py: with a schema, a struct is a dict of field name -> value and `*_schema`
is its `Schema`; a primitive with a schema is the Python value with a primitive `Schema` (`Schema("string")`, ...);
without a schema (schemaless JSON, StringConverter, ByteArrayConverter) `*_schema` is None and the value is what
the converter gave (dicts, lists, str, int, float, bool, None, bytes). Headers keep their order and duplicates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sink_engine.convert.schema import Schema

CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE = "CreateTime", "LogAppendTime", "NoTimestampType"


@dataclass(frozen=True, slots=True)
class Header:
    """One Kafka header as Connect's header converter gives it: `schema` None and `value` the raw bytes (or
    None) for a header read from Kafka; a transform that makes a header sets a value with its schema."""

    name: str
    value: Any
    schema: Schema | None = None


@dataclass(frozen=True, slots=True)
class TransformRecord:
    """Immutable: a transform returns a new record (`with_changes`) or None to drop it.

    `topic` is the record's topic as the chain has made it (routers change it); `source_topic`, `partition` and
    `offset` say where it was read and never change (offsets, commits and dead letters use them)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None  # epoch milliseconds
    timestamp_type: str
    key: Any
    key_schema: Schema | None
    value: Any
    value_schema: Schema | None
    headers: tuple[Header, ...] = ()
    source_topic: str = ""

    def with_changes(self, **changes: Any) -> TransformRecord:
        return dataclasses.replace(self, **changes)
