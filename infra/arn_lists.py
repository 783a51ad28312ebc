"""Resource lists of a Lambda role's policy that stay within IAM's policy size quotas: a role's inline policies
hold 10,240 characters in all and a managed policy 6,144 ("IAM and AWS STS quotas"), which the ARNs of a few hundred
topics or connectors exceed. Past ARN_LIST_BUDGET characters a list becomes one wildcard."""

from __future__ import annotations

from infra.settings import MskSettings

ARN_LIST_BUDGET = 2_500


def over_budget(resources: list[str]) -> bool:
    """Whether `resources` (ARNs, names) exceed ARN_LIST_BUDGET characters."""
    return sum(len(r) for r in resources) > ARN_LIST_BUDGET


def listed_or_wildcard(msk: MskSettings, kind: str, names: list[str], wildcard: str) -> list[str]:
    """The ARNs of MSK `kind` (topic, group) `names`, or the one ARN of `wildcard` when they are over budget."""
    arns = [msk.resource_arn(kind, n) for n in names]
    return [msk.resource_arn(kind, wildcard)] if over_budget(arns) else arns
