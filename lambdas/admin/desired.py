"""The desired published state of the connectors, as pure data computed from the deployment's connector specs.

`DesiredState.from_json` reads the document the stack passes (custom resource property `State`, and the copy
kept at `<config_prefix>_desired.json` for direct invokes). The admin owns only what it publishes under the
config prefix: each connector's config and the connector index the trigger and the DLQ replay read; the job roles
and the bucket's lifecycle rules are CloudFormation's (one owner each).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

STATE_FILE = "_desired.json"


@dataclass(frozen=True)
class ConnectorState:
    name: str
    config_key: str
    document: dict[str, Any]


@dataclass(frozen=True)
class DesiredState:
    bucket: str
    config_prefix: str
    connectors: tuple[ConnectorState, ...]
    index_key: str | None = None  # the connector index (None in the states of deployments before it)
    index: tuple[dict[str, Any], ...] = ()

    @classmethod
    def from_json(cls, text: str) -> "DesiredState":
        doc = json.loads(text)
        connectors = tuple(ConnectorState(c["name"], c["config_key"], c["document"]) for c in doc["connectors"])
        return cls(doc["bucket"], doc["config_prefix"], connectors, doc.get("index_key"), tuple(doc.get("index", ())))

    @property
    def state_key(self) -> str:
        return f"{self.config_prefix}{STATE_FILE}"

    def published_objects(self) -> dict[str, bytes]:
        """Object key -> bytes of what is published: each connector's config (what the job reads with --config)
        and the connector index (what the trigger and the DLQ replay read through CONNECTORS_URI)."""
        objects = {c.config_key: json.dumps(c.document, indent=2, sort_keys=True).encode() for c in self.connectors}
        if self.index_key is not None:
            objects[self.index_key] = json.dumps(list(self.index), indent=2, sort_keys=True).encode()
        return objects
