"""The connectors the trigger starts runs for: the entries of the connector index (`CONNECTORS_URI`, read by
`lambdas.shared.connector_index`; `infra.connectors.connector_index` builds them)."""

from __future__ import annotations

from dataclasses import dataclass

from lambdas.trigger.errors import TriggerConfigError
from lambdas.trigger.rules import Rotation
from lambdas.trigger.sizing import RunShape


@dataclass(frozen=True)
class Connector:
    name: str
    topics: tuple[str, ...]
    config_uri: str
    rotation: Rotation
    role_arn: str  # the job runtime role its runs use (StartJobRun executionRoleArn)
    tables: bool = True  # writes Iceberg tables (`iceberg maintain` applies); an index without the flag: assumed
    shape: RunShape = RunShape()  # what sizes its runs (sizing.py); an index without it: the engine's defaults
    restore_targets: tuple[str, ...] = ()  # the topics a restore may produce into (names, prefixes*); none: no restore


def connectors_from_entries(entries: list[dict], default_role_arn: str | None) -> list[Connector]:
    """Index entries {name, topics, config_uri, rotation: {flush.size, rotate.schedule.interval.ms,
    rotate.interval.ms, timestamp.extractor, timezone}, role_arn?, tables?, sizing?: {tasks.max, format.class,
    sink.run.max.records.per.partition}, restore_targets?}; without `role_arn`,
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
            )
        )
    return connectors
