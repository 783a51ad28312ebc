"""What an operator asks a replay for: the source, a window, filters, the target, a dry run, a cap.

Payload (the Lambda's event, or the CLI's options), every field but `connector` optional:
  {"connector": "orders-s3-sink",
   "source": {"topic": "orders-dlq"} | {"s3_prefix": "dlq"},      # default: the connector's own DLQ
   "window": {"from_offset": 0, "to_offset": 100,                  # original offsets, [from, to)
              "from_time": "2026-01-01T00:00:00Z", "to_time": 1767225600000},  # original timestamps, [from, to)
   "filters": {"error_classes": ["ConversionError"], "topic": "orders", "partition": 0},
   "target": {"topic": "orders"},                                  # default: each record's original topic
   "dry_run": false, "max_records": 1000}
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import ConfigError


@dataclass(frozen=True)
class ReplayRequest:
    connector: str
    source_topic: str | None = None
    source_s3_prefix: str | None = None
    from_offset: int | None = None
    to_offset: int | None = None
    from_time_ms: int | None = None
    to_time_ms: int | None = None
    error_classes: tuple[str, ...] = ()
    topic: str | None = None
    partition: int | None = None
    target_topic: str | None = None
    dry_run: bool = False
    max_records: int | None = None

    def matches(self, letter: DeadLetter) -> bool:
        checks = (
            not self.error_classes or letter.error_class in self.error_classes,
            self.topic is None or letter.topic == self.topic,
            self.partition is None or letter.partition == self.partition,
            self.from_offset is None or letter.offset >= self.from_offset,
            self.to_offset is None or letter.offset < self.to_offset,
            self.from_time_ms is None or (letter.timestamp or 0) >= self.from_time_ms,
            self.to_time_ms is None or (letter.timestamp or 0) < self.to_time_ms,
        )
        return all(checks)


def request_from_payload(payload: dict, settings: DeadLetterSettings) -> ReplayRequest:
    """Validate a payload against the connector's dead-letter settings; ConfigError names the field at fault."""
    if payload.get("connector") != settings.connector:
        raise ConfigError("connector", f"{payload.get('connector')!r} is not the connector {settings.connector!r}")
    source = _mapping(payload, "source")
    topic = source.get("topic") or None
    prefix = source.get("s3_prefix") or None
    if topic is None and prefix is None:
        topic = settings.topic or None
        prefix = settings.s3_prefix or None
    if (topic is None) == (prefix is None):
        raise ConfigError("source", 'name one dead-letter source: {"topic": ...} or {"s3_prefix": ...}')
    window, filters = _mapping(payload, "window"), _mapping(payload, "filters")
    return ReplayRequest(
        connector=settings.connector,
        source_topic=topic,
        source_s3_prefix=prefix,
        from_offset=_int(window, "from_offset"),
        to_offset=_int(window, "to_offset"),
        from_time_ms=_time_ms(window, "from_time"),
        to_time_ms=_time_ms(window, "to_time"),
        error_classes=tuple(filters.get("error_classes") or ()),
        topic=filters.get("topic"),
        partition=_int(filters, "partition"),
        target_topic=_mapping(payload, "target").get("topic"),
        dry_run=bool(payload.get("dry_run", False)),
        max_records=_int(payload, "max_records", minimum=1),
    )


def _mapping(payload: dict, name: str) -> dict:
    value = payload.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(name, "must be a JSON object")
    return value


def _int(mapping: dict, name: str, minimum: int = 0) -> int | None:
    value = mapping.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise ConfigError(name, f"{value!r} is not a whole number")
    if int(value) < minimum:
        raise ConfigError(name, f"must be at least {minimum}")
    return int(value)


def _time_ms(mapping: dict, name: str) -> int | None:
    """Epoch milliseconds, or an ISO-8601 time (UTC when it names no offset)."""
    value = mapping.get(name)
    if value is None or isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        moment = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(name, f"{value!r} is neither epoch milliseconds nor an ISO-8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)
