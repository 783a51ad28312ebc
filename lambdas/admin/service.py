"""Plan and apply the reconciliation of the desired per-connector state; idempotent: a second apply changes nothing.

Ownership: lifecycle rules whose ID starts with RULE_PREFIX, the job role's inline policy `policy_name`, and the
objects under `config_prefix`. Everything else in the bucket's lifecycle configuration is kept as it is.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from lambdas.admin.desired import RULE_PREFIX, STATE_FILE, DesiredState
from lambdas.admin.live import LiveState


@dataclass(frozen=True)
class Plan:
    lifecycle: list[dict] | None = None  # the full rule list to put, or None when unchanged
    policy: dict | None = None  # the policy document to put, or None when unchanged
    put_objects: dict[str, bytes] = field(default_factory=dict)
    delete_objects: tuple[str, ...] = ()

    @property
    def changes(self) -> list[str]:
        out = []
        if self.lifecycle is not None:
            out.append("lifecycle rules")
        if self.policy is not None:
            out.append("job role policy")
        out += [f"put {k}" for k in sorted(self.put_objects)] + [f"delete {k}" for k in self.delete_objects]
        return out


class AdminService:
    def __init__(self, live: LiveState):
        self._live = live

    def plan(self, desired: DesiredState) -> Plan:
        live_rules = self._live.lifecycle_rules(desired.bucket)
        kept = [r for r in live_rules if not r.get("ID", "").startswith(RULE_PREFIX)]
        owned = desired.lifecycle_rules()
        live_owned = [r for r in live_rules if r.get("ID", "").startswith(RULE_PREFIX)]
        lifecycle = None if _canonical(owned) == _canonical(live_owned) else kept + owned
        wanted_policy = desired.job_policy()
        live_policy = self._live.role_policy(desired.role_name, desired.policy_name)
        policy = None if live_policy == wanted_policy else wanted_policy
        wanted = {**desired.config_objects(), desired.state_key: _state_bytes(desired)}
        live_objects = self._live.objects(desired.bucket, desired.config_prefix)
        puts = {k: v for k, v in wanted.items() if live_objects.get(k) != v}
        deletes = tuple(sorted(k for k in live_objects if k not in wanted))
        return Plan(lifecycle, policy, puts, deletes)

    def apply(self, desired: DesiredState) -> Plan:
        plan = self.plan(desired)
        if plan.lifecycle is not None:
            self._live.put_lifecycle_rules(desired.bucket, plan.lifecycle)
        if plan.policy is not None:
            self._live.put_role_policy(desired.role_name, desired.policy_name, plan.policy)
        for key, body in plan.put_objects.items():
            self._live.put_object(desired.bucket, key, body)
        for key in plan.delete_objects:
            self._live.delete_object(desired.bucket, key)
        return plan

    def remove(self, desired: DesiredState) -> list[str]:
        """Undo what the admin owns (stack deletion): its rules, the inline policy, the published configs."""
        live_rules = self._live.lifecycle_rules(desired.bucket)
        kept = [r for r in live_rules if not r.get("ID", "").startswith(RULE_PREFIX)]
        removed = []
        if len(kept) != len(live_rules):
            self._live.put_lifecycle_rules(desired.bucket, kept)
            removed.append("lifecycle rules")
        self._live.delete_role_policy(desired.role_name, desired.policy_name)
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


def _canonical(rules: list[dict]) -> str:
    """Rules compared on the fields the admin sets (S3 may add others when it reads them back)."""
    fields = ("ID", "Status", "Filter", "Transitions")
    projected = [{f: r.get(f) for f in fields} for r in rules]
    return json.dumps(sorted(projected, key=lambda r: r["ID"] or ""), sort_keys=True, default=str)
