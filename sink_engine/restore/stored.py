"""A record as a backup holds it, and the origin header a restore adds to what it produces.

`sink.restore.origin`: the record's original coordinates as compact JSON, `{"topic": ..., "partition": ...,
"offset": ...}`, appended after the record's own headers (so the last header of that name is the restore's own,
even when a restored record is backed up and restored again). The tail scan reads it to know what is present.
"""

from __future__ import annotations

from typing import NamedTuple

import orjson

ORIGIN_HEADER = "sink.restore.origin"


class StoredRecord(NamedTuple):
    """One record read back from an object. `timestamp` None: the object holds none (ByteArray, JSON) or Kafka had
    none; `timestamp_type` a Kafka TimestampType name or None when unknown."""

    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str | None
    key: bytes | None
    value: bytes | None
    headers: list | None  # [(name, bytes or None)] in Kafka's order; None when the backup does not hold them


def origin_header(topic: str, partition: int, offset: int) -> tuple[str, bytes]:
    """orjson's compact text of the dict, formatted directly (one per record produced)."""
    return ORIGIN_HEADER, b'{"topic":%b,"partition":%d,"offset":%d}' % (orjson.dumps(topic), partition, offset)


def origin_of(headers: list | None) -> tuple[str, int, int] | None:
    """(topic, partition, offset) of the last origin header; None without one (or with one not ours)."""
    for name, value in reversed(headers or []):
        if name == ORIGIN_HEADER and value is not None:
            try:
                origin = orjson.loads(value)
                return origin["topic"], int(origin["partition"]), int(origin["offset"])
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                return None
    return None
