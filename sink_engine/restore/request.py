"""What one restore is asked to do, frozen: the source topic, the target, and which records (partitions, an
original offset range, a record time range). Built by the CLI from its options, or by another caller."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.errors import OptionError
from sink_engine.source.settings import SourceSettings


@dataclass(frozen=True)
class RestoreRequest:
    config: SinkConfig  # the connector whose backup is read
    topic: str  # the source topic: its objects are under <topics.dir>/<topic>/
    target_topic: str
    partitions: tuple[int, ...] | None = None  # None: every partition with objects
    from_offset: int | None = None  # original offsets, both inclusive
    to_offset: int | None = None
    from_time: int | None = None  # record timestamps, epoch ms, both inclusive
    to_time: int | None = None
    target_bootstrap_servers: str | None = None  # None: the connector's cluster and client settings
    create_target: bool = False  # create a missing target topic (the source's partition count)
    binary_headers: frozenset = frozenset()  # header names whose sidecar values may be base64 (sidecar_values.py)

    def __post_init__(self) -> None:
        topics = SourceSettings.from_config(self.config).topics
        if topics is not None and self.topic not in topics:
            raise OptionError("--topic", f"{self.topic} is not one of the connector's topics ({', '.join(topics)})")
        for option, value in (("--from-offset", self.from_offset), ("--to-offset", self.to_offset)):
            if value is not None and value < 0:
                raise OptionError(option, f"{value} is negative")
        if any(p < 0 for p in self.partitions or ()):
            raise OptionError("--partitions", "partitions are numbers from 0")
        for low, high, names in (
            (self.from_offset, self.to_offset, "--from-offset/--to-offset"),
            (self.from_time, self.to_time, "--from-time/--to-time"),
        ):
            if low is not None and high is not None and low > high:
                raise OptionError(names, f"the range is empty: {low} > {high}")

    @property
    def selects_time(self) -> bool:
        return self.from_time is not None or self.to_time is not None

    def wants_offset(self, offset: int) -> bool:
        return (self.from_offset is None or offset >= self.from_offset) and (
            self.to_offset is None or offset <= self.to_offset
        )

    def wants_time(self, timestamp: int | None) -> bool:
        if not self.selects_time:
            return True
        return (
            timestamp is not None
            and (self.from_time is None or timestamp >= self.from_time)
            and (self.to_time is None or timestamp <= self.to_time)
        )


def parse_partitions(option: str, text: str | None) -> tuple[int, ...] | None:
    """`0,3,5` -> (0, 3, 5)."""
    if text is None:
        return None
    try:
        return tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise OptionError(option, f"{text!r}: expected partition numbers separated by commas") from None


def parse_names(text: str | None) -> frozenset:
    """`trace,span` -> {"trace", "span"}."""
    return frozenset(name.strip() for name in (text or "").split(",") if name.strip())


def parse_time(option: str, text: str | None) -> int | None:
    """Epoch milliseconds from epoch milliseconds (digits) or ISO-8601 with a zone (`2024-01-15T00:00:00Z`,
    `...+02:00`)."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise OptionError(option, f"{text!r}: expected epoch milliseconds or ISO-8601 with a zone") from None
    if moment.tzinfo is None:
        raise OptionError(option, f"{text!r} has no zone: add Z or an offset such as +00:00")
    return int(moment.timestamp() * 1000)
