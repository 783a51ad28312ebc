"""A restore request to the trigger, checked against the connector's index entry before any job run starts, and the
`sink-engine restore` arguments it becomes.

The event: `{"action": "restore", "connector": "<name>", "topic": "<a topic of the connector>", "target_topic":
"<a topic its restore_targets allow>", "partitions": [0, 3]?, "from_offset": N?, "to_offset": N? (inclusive),
"from_time": T?, "to_time": T?, "binary_headers": ["<header name>"]?, "time": "<names the request>"?}`, T an
ISO-8601 time with its zone or epoch milliseconds. Each field is checked here (RestoreRequestError names the one at
fault); what needs the connector's objects (a time range needs envelope objects) is the engine's to refuse.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime

from lambdas.trigger.errors import TriggerError

FIELDS = (
    "action",
    "connector",
    "topic",
    "target_topic",
    "partitions",
    "from_offset",
    "to_offset",
    "from_time",
    "to_time",
    "binary_headers",
    "time",
)
_TOPIC = r"[A-Za-z0-9._-]{1,249}"


class RestoreRequestError(TriggerError, ValueError):
    """A restore request the trigger refuses, naming its field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"restore request, {field}: {message}")
        self.field = field


def target_allowed(patterns: tuple[str, ...], topic: str) -> bool:
    """Whether `topic` is one of `patterns` (names, or prefixes ending in `*`), as MSK matches a topic ARN."""
    return any(topic.startswith(p[:-1]) if p.endswith("*") else topic == p for p in patterns)


@dataclass(frozen=True)
class RestoreRequest:
    topic: str
    target_topic: str
    partitions: tuple[int, ...] | None = None
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: str | None = None  # as given: ISO-8601 with its zone, or epoch milliseconds
    to_time: str | None = None
    binary_headers: tuple[str, ...] = ()  # header names a headers sidecar may hold as base64 (--binary-headers)

    @classmethod
    def from_event(
        cls, event: dict, connector: str, topics: tuple[str, ...], targets: tuple[str, ...]
    ) -> RestoreRequest:
        """The request of `event` for `connector`, which reads `topics` and may restore into `targets`."""
        unknown = sorted(set(event) - set(FIELDS))
        if unknown:
            raise RestoreRequestError(unknown[0], f"is not a field of a restore request ({', '.join(FIELDS[1:])})")
        if not targets:
            raise RestoreRequestError(
                "connector",
                f"{connector!r} has no restore deployed: its environment's "
                f"settings give it no restore.connectors.{connector}.target_topics",
            )
        topic = _text(event, "topic")
        if topic not in topics:
            raise RestoreRequestError(
                "topic", f"{topic!r} is not a topic of connector {connector!r} ({', '.join(topics)})"
            )
        target = _text(event, "target_topic")
        if not re.fullmatch(_TOPIC, target):
            raise RestoreRequestError("target_topic", f"{target!r} is not a Kafka topic name")
        if not target_allowed(targets, target):
            raise RestoreRequestError(
                "target_topic",
                f"{target!r} is outside connector {connector!r}'s restore "
                f"targets ({', '.join(targets)}: restore.connectors.{connector}.target_topics)",
            )
        from_offset, to_offset = _offset(event, "from_offset"), _offset(event, "to_offset")
        if from_offset is not None and to_offset is not None and from_offset > to_offset:
            raise RestoreRequestError("to_offset", f"{to_offset} is before from_offset {from_offset}")
        from_time, to_time = _time(event, "from_time"), _time(event, "to_time")
        if from_time and to_time and from_time[1] > to_time[1]:
            raise RestoreRequestError("to_time", f"{to_time[0]} is before from_time {from_time[0]}")
        return cls(
            topic,
            target,
            _partitions(event),
            from_offset,
            to_offset,
            from_time and from_time[0],
            to_time and to_time[0],
            _header_names(event),
        )

    def arguments(self, config_uri: str) -> list[str]:
        """The engine CLI's arguments of this restore of the connector whose config is at `config_uri`."""
        arguments = ["restore", "--config", config_uri, "--topic", self.topic, "--target-topic", self.target_topic]
        if self.partitions is not None:
            arguments += ["--partitions", ",".join(map(str, self.partitions))]
        for option, value in (
            ("--from-offset", self.from_offset),
            ("--to-offset", self.to_offset),
            ("--from-time", self.from_time),
            ("--to-time", self.to_time),
        ):
            if value is not None:
                arguments += [option, str(value)]
        if self.binary_headers:
            arguments += ["--binary-headers", ",".join(self.binary_headers)]
        return arguments

    def token(self, connector: str, requested_at: str) -> str:
        """StartJobRun's client token: the same request at the same `requested_at` starts one run."""
        request = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(f"{connector}#restore#{request}#{requested_at}".encode()).hexdigest()[:64]


def _text(event: dict, field: str) -> str:
    value = event.get(field)
    if not isinstance(value, str) or not value:
        raise RestoreRequestError(field, f"is required: a topic name (got {value!r})")
    return value


def _offset(event: dict, field: str) -> int | None:
    value = event.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RestoreRequestError(field, f"{value!r} is not an offset (an integer from 0)")
    return value


def _time(event: dict, field: str) -> tuple[str, float] | None:
    """(the time as the engine takes it, its epoch milliseconds), or None when absent."""
    value = event.get(field)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value), float(value)
    if isinstance(value, str):
        if re.fullmatch(r"\d+", value):
            return value, float(value)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return value, parsed.timestamp() * 1000
    raise RestoreRequestError(
        field, f"{value!r} is not a time: give ISO-8601 with its zone (2026-11-25T10:00:00Z) or epoch milliseconds"
    )


def _partitions(event: dict) -> tuple[int, ...] | None:
    value = event.get("partitions")
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in value)
    ):
        raise RestoreRequestError("partitions", f"{value!r} is not a non-empty list of partition numbers")
    if len(set(value)) != len(value):
        raise RestoreRequestError("partitions", f"{value!r} names a partition twice")
    return tuple(sorted(value))


def _header_names(event: dict) -> tuple[str, ...]:
    value = event.get("binary_headers")
    if value is None:
        return ()
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(n, str) and n.strip() == n and n and "," not in n for n in value)
    ):
        raise RestoreRequestError(
            "binary_headers",
            f"{value!r} is not a non-empty list of header names (without commas or surrounding spaces)",
        )
    return tuple(sorted(set(value)))
