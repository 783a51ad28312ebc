"""The test copy of a policy document for moto's IAM enforcement, and the list of what it relaxes.

moto 5.2.5 authorizes S3 requests against the statement's resource ARNs, and sts:AssumeRole against the role's
ARN, but every other service with the resource `*` (a statement naming an ARN never matches there), and it asks
`dynamodb:TransactWriteItems` / `TransactGetItems` where AWS authorizes a transaction by its item actions. So the
copy:
- keeps S3 actions and sts:AssumeRole with their resources, as deployed;
- gives the other actions of a statement the resource `*` (their real ARNs are checked by test_policies.py and,
  against the calls actually made, by test_recorded_calls.py);
- adds the transaction action next to the item actions that authorize a transaction on AWS.
Conditions are kept (moto ignores them; the recorded-calls test evaluates them). Every change is a `Relaxation`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.iam.policies import PolicyDocument

# transaction action moto asks -> the item actions AWS authorizes it by
TRANSACTION_ACTIONS = {
    "dynamodb:TransactWriteItems": {
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
    },
    "dynamodb:TransactGetItems": {"dynamodb:GetItem"},
}


def _by_resource(action: str) -> bool:
    """Whether moto authorizes `action` against the statement's resources."""
    return action.lower().startswith("s3:") or action.lower() == "sts:assumerole"


@dataclass(frozen=True)
class Relaxation:
    source: str
    sid: str | None
    actions: tuple[str, ...]
    resources: tuple[str, ...]  # as deployed (the copy has "*")
    reason: str


def for_moto(policy: PolicyDocument) -> tuple[dict, list[Relaxation]]:
    """The document moto should evaluate for `policy`, and what it relaxes (ValueError on what it cannot copy)."""
    statements, relaxed = [], []
    for statement in policy.statements:
        unsupported = {"NotAction", "NotResource", "NotPrincipal"} & set(statement)
        if unsupported:
            raise ValueError(f"{policy.source}: {sorted(unsupported)} is not supported by the moto copy")
        actions = _as_list(statement["Action"])
        resources = _as_list(statement["Resource"])
        kept = [a for a in actions if _by_resource(a)]
        other = [a for a in actions if not _by_resource(a)]
        if kept:
            statements.append({**statement, "Action": kept})
        if not other:
            continue
        if statement["Effect"] != "Allow" and resources != ["*"]:
            raise ValueError(f"{policy.source}: a Deny on {resources} cannot be widened to '*' for moto")
        added = sorted(t for t, items in TRANSACTION_ACTIONS.items() if items & set(other))
        if resources != ["*"]:
            relaxed.append(
                Relaxation(
                    policy.source,
                    statement.get("Sid"),
                    tuple(other),
                    tuple(resources),
                    "moto authorizes services other than S3 with the resource '*'",
                )
            )
        if added:
            relaxed.append(
                Relaxation(
                    policy.source,
                    statement.get("Sid"),
                    tuple(added),
                    tuple(resources),
                    "moto authorizes a transaction by this action; AWS by its item actions",
                )
            )
        statements.append({**statement, "Action": other + added, "Resource": "*"})
    return {"Version": "2012-10-17", "Statement": statements}, relaxed


def _as_list(value) -> list[str]:
    return list(value) if isinstance(value, list) else [value]
