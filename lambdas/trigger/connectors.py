"""The connectors the trigger starts runs for: the CONNECTORS environment value (infra/connectors.py builds it)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from lambdas.trigger.errors import TriggerConfigError
from lambdas.trigger.rules import Rotation


@dataclass(frozen=True)
class Connector:
    name: str
    topics: tuple[str, ...]
    config_uri: str
    rotation: Rotation
    role_arn: str  # the job runtime role its runs use (StartJobRun executionRoleArn)


def connectors_from_json(text: str, default_role_arn: str | None) -> list[Connector]:
    """A JSON list of {name, topics, config_uri, rotation: {flush.size, rotate.schedule.interval.ms,
    rotate.interval.ms, timestamp.extractor, timezone}, role_arn?}; without `role_arn`, `default_role_arn`
    (JOB_ROLE_ARN) is used, and one of the two is required."""
    connectors = []
    for entry in json.loads(text):
        name = entry.get("name", "?")
        missing = [k for k in ("name", "topics", "config_uri", "rotation") if k not in entry]
        if missing:
            raise TriggerConfigError(name, "CONNECTORS", f"entry lacks {', '.join(missing)}")
        role = entry.get("role_arn") or default_role_arn
        if not role:
            raise TriggerConfigError(name, "role_arn", "absent from its CONNECTORS entry and no JOB_ROLE_ARN is set")
        connectors.append(Connector(name, tuple(entry["topics"]), entry["config_uri"],
                                    Rotation.from_entry(name, entry["rotation"]), role))
    return connectors
