"""The desired published state of the connectors, as pure data computed from the deployment's connector specs.

`DesiredState.from_json` reads the document the stack passes (custom resource property `State`, and the copy
kept at `<config_prefix>_desired.json` for direct invokes). The admin owns only what it publishes under the
config prefix: each connector's config and the connector index the trigger and the DLQ replay read; the job roles
and the bucket's lifecycle rules are CloudFormation's (one owner each).
"""

from __future__ import annotations

import base64
import gzip
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
    def from_json(cls, text: str) -> DesiredState:
        """The configs are `connectors` and the index `index`, or packed as `connectors_gzip` and `index_gzip`
        (base64 of the gzipped JSON list: the stacks pack them for environments of hundreds of connectors,
        infra/constructs/admin.py)."""
        doc = json.loads(text)
        connectors = tuple(
            ConnectorState(c["name"], c["config_key"], c["document"]) for c in _listed(doc, "connectors", None)
        )
        return cls(
            doc["bucket"], doc["config_prefix"], connectors, doc.get("index_key"), tuple(_listed(doc, "index", ()))
        )

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


def _listed(doc: dict, key: str, default: tuple[()] | None) -> Any:
    """`doc[key]`, or the list packed in `doc[key + "_gzip"]`; `default` when neither is there (None: KeyError)."""
    if f"{key}_gzip" in doc:
        return json.loads(gzip.decompress(base64.b64decode(doc[f"{key}_gzip"])))
    return doc[key] if default is None else doc.get(key, default)
