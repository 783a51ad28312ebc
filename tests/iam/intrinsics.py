"""CloudFormation intrinsics resolved against physical values the test gives, as CloudFormation would at deploy.

`Physical` says what `Ref` and `Fn::GetAtt` return for each logical id of one stack, the pseudo parameters
(AWS::Region, AWS::AccountId, AWS::Partition, AWS::URLSuffix, AWS::StackName) and the exports other stacks
published (for `Fn::ImportValue`). `resolve` handles Ref, Fn::GetAtt, Fn::Join, Fn::Select, Fn::Split, Fn::Sub and
Fn::ImportValue; anything else (Fn::If, Fn::FindInMap, ...) raises UnresolvedError naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class UnresolvedError(KeyError):
    """A token the physical values do not cover; the message names the logical id, attribute or function."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Physical:
    refs: Mapping[str, str]  # logical id -> what Ref returns
    attributes: Mapping[tuple[str, str], str]  # (logical id, attribute) -> what Fn::GetAtt returns
    pseudo: Mapping[str, str]  # "AWS::Region" -> "eu-west-1", ...
    exports: Mapping[str, str] = field(default_factory=dict)  # export name -> value

    def ref(self, name: str) -> str:
        if name in self.pseudo:
            return self.pseudo[name]
        if name not in self.refs:
            raise UnresolvedError(f"Ref {name}: no physical value for this logical id or pseudo parameter")
        return self.refs[name]

    def get_att(self, logical_id: str, attribute: str) -> str:
        if (logical_id, attribute) not in self.attributes:
            raise UnresolvedError(f"Fn::GetAtt {logical_id}.{attribute}: no physical value")
        return self.attributes[(logical_id, attribute)]


def resolve(value: Any, physical: Physical) -> Any:
    """`value` with every intrinsic replaced by its physical value (dicts and lists walked recursively)."""
    if isinstance(value, list):
        return [resolve(v, physical) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((key, argument),) = value.items()
        if key == "Ref" or key.startswith("Fn::"):
            if key not in _FUNCTIONS:
                raise UnresolvedError(f"{key} is not supported by tests/iam/intrinsics.py (argument {argument!r})")
            return _FUNCTIONS[key](argument, physical)
    return {k: resolve(v, physical) for k, v in value.items()}


def _get_att(argument, physical: Physical) -> str:
    logical_id, attribute = argument.split(".", 1) if isinstance(argument, str) else argument
    return physical.get_att(logical_id, resolve(attribute, physical))


def _join(argument, physical: Physical) -> str:
    delimiter, parts = argument
    return resolve(delimiter, physical).join(str(p) for p in resolve(parts, physical))


def _select(argument, physical: Physical):
    index, items = argument
    return resolve(items, physical)[int(resolve(index, physical))]


def _split(argument, physical: Physical) -> list[str]:
    delimiter, text = argument
    return resolve(text, physical).split(resolve(delimiter, physical))


_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")


def _sub(argument, physical: Physical) -> str:
    text, variables = (argument, {}) if isinstance(argument, str) else argument
    variables = resolve(variables, physical)

    def value_of(match: re.Match) -> str:
        name = match.group(1)
        if name in variables:
            return str(variables[name])
        if "." in name:
            return physical.get_att(*name.split(".", 1))
        return physical.ref(name)

    return _SUB_VARIABLE.sub(value_of, text).replace("${!", "${")


def _import_value(argument, physical: Physical) -> str:
    name = resolve(argument, physical)
    if name not in physical.exports:
        raise UnresolvedError(f"Fn::ImportValue {name}: no stack exports it")
    return physical.exports[name]


_FUNCTIONS = {
    "Ref": lambda argument, physical: physical.ref(argument),
    "Fn::GetAtt": _get_att,
    "Fn::Join": _join,
    "Fn::Select": _select,
    "Fn::Split": _split,
    "Fn::Sub": _sub,
    "Fn::ImportValue": _import_value,
}
