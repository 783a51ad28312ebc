"""The effective policy documents of a role of a synthesized CloudFormation template.

A role's documents are its inline `Policies`, every `AWS::IAM::Policy` / `AWS::IAM::ManagedPolicy` whose `Roles`
name it, and its `ManagedPolicyArns` (AWS managed ones mapped to their documents by `managed_policies`, the
template's own by their resource). Intrinsics are resolved with the `Physical` values the caller gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.iam.intrinsics import Physical, resolve
from tests.iam.managed_policies import managed_policy

_ATTACHABLE = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")


@dataclass(frozen=True)
class PolicyDocument:
    source: str  # where the template declares it, e.g. "AWS::IAM::Policy TriggerLambda...DefaultPolicy1A2B3C"
    document: dict

    @property
    def statements(self) -> list[dict]:
        statements = self.document["Statement"]
        return statements if isinstance(statements, list) else [statements]


def role_documents(template: dict, role_id: str, physical: Physical) -> list[PolicyDocument]:
    """Every policy document that applies to role `role_id` (KeyError naming it when it is not a role)."""
    resources = template["Resources"]
    if resources.get(role_id, {}).get("Type") != "AWS::IAM::Role":
        raise KeyError(f"{role_id} is not an AWS::IAM::Role of this template")
    properties = resources[role_id].get("Properties", {})
    documents = [
        PolicyDocument(f"inline {p['PolicyName']}", resolve(p["PolicyDocument"], physical))
        for p in properties.get("Policies", [])
    ]
    for arn in properties.get("ManagedPolicyArns", []):
        documents.append(_managed(arn, resources, physical))
    role_name = physical.ref(role_id)
    for logical_id, resource in resources.items():
        if resource["Type"] in _ATTACHABLE and role_name in resolve(resource["Properties"].get("Roles", []), physical):
            documents.append(
                PolicyDocument(
                    f"{resource['Type']} {logical_id}", resolve(resource["Properties"]["PolicyDocument"], physical)
                )
            )
    return documents


def _managed(arn, resources: dict, physical: Physical) -> PolicyDocument:
    own = isinstance(arn, dict) and "Ref" in arn
    if own and resources.get(arn["Ref"], {}).get("Type") == "AWS::IAM::ManagedPolicy":
        return PolicyDocument(
            f"AWS::IAM::ManagedPolicy {arn['Ref']}",
            resolve(resources[arn["Ref"]]["Properties"]["PolicyDocument"], physical),
        )
    resolved = resolve(arn, physical)
    return PolicyDocument(f"managed {resolved.rsplit('/', 1)[-1]}", managed_policy(resolved))


def wildcard_match(pattern: str, value: str, case: bool = True) -> bool:
    """IAM's wildcards: `*` any run of characters, `?` one (actions compare case-insensitively: case=False)."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, 0 if case else re.IGNORECASE) is not None


def without_action(documents: list[PolicyDocument], action: str) -> list[PolicyDocument]:
    """`documents` without any grant of `action` (entries naming it, or a wildcard covering it, are removed; a
    statement left with no action is dropped); ValueError when nothing grants it, so that a test removing it
    cannot pass for want of it."""
    changed, found = [], False
    for policy in documents:
        statements = []
        for statement in policy.statements:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            kept = [a for a in actions if not wildcard_match(a, action, case=False)]
            found = found or len(kept) < len(actions)
            if kept:
                statements.append({**statement, "Action": kept})
        changed.append(PolicyDocument(policy.source, {**policy.document, "Statement": statements}))
    if not found:
        raise ValueError(f"no statement grants {action}")
    return changed
