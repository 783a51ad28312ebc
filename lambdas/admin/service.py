"""Plan and apply the publication of the connector configs; idempotent: a second apply changes nothing.

Ownership: the objects under `config_prefix` (each connector's `<name>.json`, the connector index `_index.json`
and the desired-state copy).
Everything else (job roles, lifecycle rules) belongs to CloudFormation.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from lambdas.admin.desired import STATE_FILE, DesiredState
from lambdas.admin.live import LiveState


@dataclass(frozen=True)
class Plan:
    put_objects: dict[str, bytes] = field(default_factory=dict)
    delete_objects: tuple[str, ...] = ()

    @property
    def changes(self) -> list[str]:
        return [f"put {k}" for k in sorted(self.put_objects)] + [f"delete {k}" for k in self.delete_objects]


class AdminService:
    def __init__(self, live: LiveState):
        self._live = live

    def plan(self, desired: DesiredState) -> Plan:
        wanted = {**desired.published_objects(), desired.state_key: _state_bytes(desired)}
        live_objects = self._live.objects(desired.bucket, desired.config_prefix)
        puts = {k: v for k, v in wanted.items() if live_objects.get(k) != v}
        deletes = tuple(sorted(k for k in live_objects if k not in wanted))
        return Plan(puts, deletes)

    def apply(self, desired: DesiredState) -> Plan:
        """Put what differs, the configs before the index (so the index never names a config not yet published),
        then delete what is no longer wanted."""
        plan = self.plan(desired)
        for key, body in plan.put_objects.items():
            self._live.put_object(desired.bucket, key, body)
        for key in plan.delete_objects:
            self._live.delete_object(desired.bucket, key)
        return plan

    def remove(self, desired: DesiredState) -> list[str]:
        """Undo what the admin owns (stack deletion): everything under the config prefix."""
        removed = []
        for key in sorted(self._live.objects(desired.bucket, desired.config_prefix)):
            self._live.delete_object(desired.bucket, key)
            removed.append(f"delete {key}")
        return removed

    def stored_state(self, bucket: str, config_prefix: str) -> DesiredState | None:
        """The desired state the last apply stored, for direct invokes (None before the first deployment)."""
        body = self._live.read_object(bucket, f"{config_prefix}{STATE_FILE}")
        return DesiredState.from_json(body.decode()) if body else None


def _state_bytes(desired: DesiredState) -> bytes:
    return json.dumps(asdict(desired), indent=2, sort_keys=True).encode()
