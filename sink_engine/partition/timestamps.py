"""Timestamp extractors (`timestamp.extractor`): the time of each record, in epoch milliseconds.

- `Record`: the Kafka record timestamp.
- `RecordField`: the value's field `timestamp.field` (nested `a.b` allowed): a number of epoch ms, a field of
  Connect's Timestamp logical type, a string of digits (epoch ms), or an ISO-8601 string (`2024-01-15`,
  `2024-01-15T10:00:00.123+01:00`, `...Z`); an ISO string without an offset is read as UTC (as the connector
  does on a UTC JVM).
- `Wallclock`: the run's planned wall-clock time, the same for every record of a range and reused by a
  rerun after a crash, so that a retry writes the same keys (the connector uses each record's processing
  time, which a retry cannot repeat).

A timestamp that is missing or unreadable fails its record (FieldError naming the field).
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

from sink_engine.partition.fields import MISSING, FieldError, field_path, lookup_all
from sink_engine.partition.settings import PartitionSettings
from sink_engine.records import RecordChunk, ValueColumn

_DIGITS = re.compile(r"-?\d+")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TimestampExtractor:
    """Extract once per chunk: the partitioner and the rotation policy ask for the same chunk."""

    field: str  # the time's source, as record errors name it
    _chunk = None
    _stamps: list = []

    def extract(self, chunk: RecordChunk, values: ValueColumn) -> list[int]:
        if chunk is not self._chunk:
            self._stamps, self._chunk = self._extract(chunk, values), chunk
        return self._stamps

    def _extract(self, chunk: RecordChunk, values: ValueColumn) -> list[int]:
        raise NotImplementedError


class RecordTimestamps(TimestampExtractor):
    field = "timestamp (Kafka record timestamp)"

    def _extract(self, chunk: RecordChunk, values: ValueColumn) -> list[int]:
        stamps = chunk.timestamps
        for i, stamp in enumerate(stamps):
            if stamp is None or stamp < 0:
                raise FieldError(chunk.topic, chunk.partition, chunk.offsets[i], self.field, "is not set")
        return stamps


class FieldTimestamps(TimestampExtractor):
    def __init__(self, name: str):
        self.field, self._path = name, field_path(name)

    def _extract(self, chunk: RecordChunk, values: ValueColumn) -> list[int]:
        raw = lookup_all(values.documents(), self._path)
        if all(type(value) is int for value in raw):  # epoch ms numbers: the common case
            return raw
        stamps = []
        for i, value in enumerate(raw):
            stamp = value if type(value) is int else parse_timestamp(value)
            if stamp is None:
                problem = (
                    "is missing from the value"
                    if value is MISSING
                    else f"is not epoch milliseconds or an ISO-8601 time: {value!r:.80}"
                )
                raise FieldError(chunk.topic, chunk.partition, chunk.offsets[i], self.field, problem)
            stamps.append(stamp)
        return stamps


class WallclockTimestamps(TimestampExtractor):
    field = "wallclock"

    def __init__(self, wallclock_ms: int):
        self.wallclock_ms = wallclock_ms

    def _extract(self, chunk: RecordChunk, values: ValueColumn) -> list[int]:
        return [self.wallclock_ms] * len(chunk)


def parse_timestamp(value: object) -> int | None:
    """Epoch ms from a number, a string of digits or an ISO-8601 string; None when it is none of those."""
    if isinstance(value, bool) or value is None or value is MISSING:
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, datetime):  # a field of Connect's Timestamp logical type (RecordFieldTimestampExtractor)
        return (value - _EPOCH) // timedelta(milliseconds=1)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _DIGITS.fullmatch(text):
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def extractor_for(settings: PartitionSettings, wallclock_ms: int | None = None) -> TimestampExtractor:
    """The configured extractor; `wallclock_ms` is the range's planned time (now when unplanned)."""
    kind = settings.extractor
    if kind == "record":
        return RecordTimestamps()
    if kind == "recordfield":
        return FieldTimestamps(settings.timestamp_field)
    return WallclockTimestamps(wallclock_ms if wallclock_ms is not None else int(time.time() * 1000))
