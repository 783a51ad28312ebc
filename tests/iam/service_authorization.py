"""The Service Authorization Reference extract (`service_authorization.json`, with its sources and the date it was
checked): per IAM action the stacks grant or a recorded call needs, its resource types and the condition keys a
request for it can carry.

A request carries only those keys and the global `aws:*` ones: a condition on any other key never sees a value
(`s3:prefix` is a key of ListBucket, not of ListBucketMultipartUploads). Key names compare case-insensitively, as
IAM compares them; a placeholder of the SAR (`aws:ResourceTag/${TagKey}`, `s3:ExistingObjectTag/<key>`,
`secretsmanager:ResourceTag/tag-key`) stands for any text.

`statement_flaws` is the check every synthesized role's statements pass: each action is in the extract, each
condition key is carried by one of the statement's actions. An action missing from the extract is an error naming
it: add its entry from its service's SAR page (the file's `services`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.iam.policies import wildcard_match

EXTRACT = Path(__file__).with_name("service_authorization.json")


@dataclass(frozen=True)
class ActionAuthorization:
    action: str  # "s3:ListBucketMultipartUploads"
    resource_types: tuple[str, ...]
    condition_keys: tuple[str, ...]  # as the SAR writes them, placeholders included

    def carries(self, key: str) -> bool:
        """Whether a request for this action can carry condition key `key`."""
        return key.lower().startswith("aws:") or any(_key_pattern(k).fullmatch(key) for k in self.condition_keys)


@cache
def _extract() -> dict:
    return json.loads(EXTRACT.read_text())


def checked() -> str:
    """The date the extract was checked against its sources (YYYY-MM-DD)."""
    return _extract()["checked"]


def authorization(action: str) -> ActionAuthorization:
    """The extract's entry for `action` (any case); KeyError naming the action and the file when it has none."""
    found = [name for name in _extract()["actions"] if name.lower() == action.lower()]
    if not found:
        raise KeyError(
            f"{action} is not in {EXTRACT.name}: add its resource types and condition keys from its "
            "service's page of the Service Authorization Reference"
        )
    entry = _extract()["actions"][found[0]]
    return ActionAuthorization(found[0], tuple(entry["resource_types"]), tuple(entry["condition_keys"]))


def matching(pattern: str) -> list[ActionAuthorization]:
    """The extract's entries a policy's Action element matches (IAM wildcards, any case)."""
    return [authorization(name) for name in _extract()["actions"] if wildcard_match(pattern, name, case=False)]


def statement_flaws(statement: dict) -> list[str]:
    """What makes `statement` (a policy statement, tokens allowed in its values) wrong under the SAR: an action
    the extract does not know, or a condition key none of its actions carries (so the condition can never see a
    value: an Allow never applies with a single-valued operator, or always does with ForAllValues)."""
    if "Action" not in statement:
        raise ValueError(f"statement {statement.get('Sid', '')!r} has no Action (NotAction is not checked)")
    actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
    found = {pattern: matching(pattern) for pattern in actions}
    flaws = [f"{pattern} is not in {EXTRACT.name}" for pattern, entries in found.items() if not entries]
    entries = [e for matched in found.values() for e in matched]
    keys = sorted({key for keys in statement.get("Condition", {}).values() for key in keys})
    flaws += [
        f"condition key {key}: no request for {', '.join(actions)} carries it (SAR)"
        for key in keys
        if entries and not any(e.carries(key) for e in entries)
    ]
    return flaws


@cache
def _key_pattern(key: str) -> re.Pattern:
    parts = re.split(r"\$\{[^}]*\}|<[^>]*>|(?<=/)tag-key$", key)
    return re.compile(".+".join(re.escape(p) for p in parts), re.IGNORECASE)
