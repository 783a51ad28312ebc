"""The connectors the trigger starts runs for: the entries of the connector index (`CONNECTORS_URI`, read by
`lambdas.shared.connector_index`; `infra.connectors.connector_index` builds them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lambdas.trigger.errors import TriggerConfigError
from lambdas.trigger.rules import Rotation
from lambdas.trigger.sizing import RunShape


@dataclass(frozen=True)
class Continuous:
    """A continuous connector's job (its index entry's `continuous`): the STREAMING run's retry policy, the grace
    period it is cancelled with (seconds), and the hash of the published config it runs with."""

    max_failed_attempts_per_hour: int
    shutdown_grace_seconds: int
    config_sha256: str

    @classmethod
    def from_entry(cls, connector: str, entry: object) -> Continuous | None:
        if entry is None:
            return None
        try:
            if not isinstance(entry, dict):
                raise TypeError(f"{entry!r} is not an object")
            found = cls(
                int(entry["max_failed_attempts_per_hour"]),
                int(entry["shutdown_grace_seconds"]),
                str(entry["config_sha256"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise TriggerConfigError(
                connector,
                "continuous",
                f"needs integer max_failed_attempts_per_hour and shutdown_grace_seconds, and config_sha256: {e!r}",
            ) from None
        if not (1 <= found.max_failed_attempts_per_hour <= 10 and 15 <= found.shutdown_grace_seconds <= 1800):
            raise TriggerConfigError(
                connector,
                "continuous",
                "max_failed_attempts_per_hour must be 1 to 10 and shutdown_grace_seconds 15 to 1800 (EMR Serverless')",
            )
        if not re.fullmatch(r"[0-9a-f]{64}", found.config_sha256):
            raise TriggerConfigError(connector, "continuous", "config_sha256 must be a SHA-256 in hex")
        return found


@dataclass(frozen=True)
class Connector:
    name: str
    topics: tuple[str, ...]
    config_uri: str
    rotation: Rotation
    role_arn: str  # the job runtime role its runs use (StartJobRun executionRoleArn)
    # its target's `Capabilities.tables` (sink_engine/target/contract.py): it writes tables, `iceberg maintain`
    # applies and its driver commits their snapshots; an index without the flag: assumed
    tables: bool = True
    shape: RunShape = RunShape()  # what sizes its runs (sizing.py); an index without it: the engine's defaults
    restore_targets: tuple[str, ...] = ()  # the topics a restore may produce into (names, prefixes*); none: no restore
    continuous: Continuous | None = None  # its job runs continuously (STREAMING); None: bounded runs


def connectors_from_entries(entries: list[dict], default_role_arn: str | None) -> list[Connector]:
    """Index entries {name, topics, config_uri, rotation: {flush.size, rotate.schedule.interval.ms,
    rotate.interval.ms, timestamp.extractor, timezone}, role_arn?, tables?, sizing?: {tasks.max, format.class,
    sink.run.max.records.per.partition}, restore_targets?, continuous?: {max_failed_attempts_per_hour,
    shutdown_grace_seconds, config_sha256}}; without `role_arn`,
    `default_role_arn` (JOB_ROLE_ARN) is used, and one of the two is required."""
    connectors = []
    for entry in entries:
        name = entry.get("name", "?")
        missing = [k for k in ("name", "topics", "config_uri", "rotation") if k not in entry]
        if missing:
            raise TriggerConfigError(name, "(entry)", f"lacks {', '.join(missing)}")
        role = entry.get("role_arn") or default_role_arn
        if not role:
            raise TriggerConfigError(name, "role_arn", "absent from its index entry and no JOB_ROLE_ARN is set")
        connectors.append(
            Connector(
                name,
                tuple(entry["topics"]),
                entry["config_uri"],
                Rotation.from_entry(name, entry["rotation"]),
                role,
                entry.get("tables", True),
                RunShape.from_entry(name, entry.get("sizing")),
                tuple(entry.get("restore_targets") or ()),
                Continuous.from_entry(name, entry.get("continuous")),
            )
        )
    return connectors
