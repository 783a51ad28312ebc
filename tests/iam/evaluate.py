"""Evaluate identity policies as AWS does for what moto leaves out: resource ARNs of every service and conditions.

Allowed = some Allow statement matches (action, resource and all its conditions) and no Deny statement does.
Wildcards `*` and `?` in actions (case-insensitive) and resources. Condition operators: StringEquals, StringLike,
ArnEquals, ArnLike, Bool, each optionally ForAllValues: / ForAnyValue:. A single-valued operator on a key the request
lacks does not match; ForAllValues on a missing key matches (AWS's rule, which is why a LeadingKeys condition
does not restrict a request without keys). Any other operator raises NotImplementedError rather than being
ignored (which is what moto does).

The request context is the Need's: only the condition keys the SAR extract lists for its action
(`service_authorization.json`, enforced by `actions.Need`) and global aws:* keys. So a condition on a key the
action's requests never carry sees no value, as on AWS: the old job-role statement that conditioned
ListBucketMultipartUploads on `s3:prefix` is false for every listing here too.
"""

from __future__ import annotations

from collections.abc import Iterable

from tests.iam.actions import Need
from tests.iam.policies import PolicyDocument, wildcard_match


def allows(documents: Iterable[PolicyDocument], need: Need) -> bool:
    statements = [s for d in documents for s in d.statements if _matches(s, need)]
    return any(s["Effect"] == "Allow" for s in statements) and not any(s["Effect"] == "Deny" for s in statements)


def resource_allows(document: PolicyDocument, principal: str, need: Need) -> bool:
    """A resource-based policy (a topic's, a queue's) deciding a request of a service `principal` (e.g.
    "cloudwatch.amazonaws.com") of the resource's own account: some Allow statement names the principal (or `*`) and
    matches action, resource and conditions, and no such Deny does. A statement's `Service` principals and `*`
    (also as `{"AWS": "*"}`) name a service; account or role principals never do."""
    statements = [s for s in document.statements if _names(s, principal) and _matches(s, need)]
    return any(s["Effect"] == "Allow" for s in statements) and not any(s["Effect"] == "Deny" for s in statements)


def _names(statement: dict, principal: str) -> bool:
    if "NotPrincipal" in statement:
        raise NotImplementedError("NotPrincipal is not evaluated by tests/iam/evaluate.py")
    named = statement["Principal"]
    if named == "*":
        return True
    unknown = set(named) - {"Service", "AWS"}
    if unknown:
        raise NotImplementedError(f"principal kinds {sorted(unknown)} are not evaluated by tests/iam/evaluate.py")
    return principal in _as_list(named.get("Service", [])) or "*" in _as_list(named.get("AWS", []))


def _matches(statement: dict, need: Need) -> bool:
    return (
        any(wildcard_match(a, need.action, case=False) for a in _as_list(statement["Action"]))
        and any(wildcard_match(r, need.resource) for r in _as_list(statement["Resource"]))
        and all(
            _condition(op, key, expected, need.context)
            for op, keys in statement.get("Condition", {}).items()
            for key, expected in keys.items()
        )
    )


def _condition(operator: str, key: str, expected, context) -> bool:
    quantifier, _, base = operator.rpartition(":")
    compare = _COMPARISONS.get(base)
    if compare is None or quantifier not in ("", "ForAllValues", "ForAnyValue"):
        raise NotImplementedError(f"condition operator {operator} is not evaluated by tests/iam/evaluate.py")
    expected = _as_list(expected)
    if key not in context:
        return quantifier == "ForAllValues"
    values = _as_list(context[key])
    match = [any(compare(e, v) for e in expected) for v in values]
    if quantifier == "ForAllValues":
        return all(match)
    return any(match)


_COMPARISONS = {
    "StringEquals": lambda expected, value: expected == value,
    "StringLike": wildcard_match,
    "ArnEquals": lambda expected, value: expected == value,
    "ArnLike": wildcard_match,
    "Bool": lambda expected, value: str(expected).lower() == str(value).lower(),
}


def _as_list(value) -> list:
    return list(value) if isinstance(value, list) else [value]
