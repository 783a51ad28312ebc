"""`SinkConfig[key]`'s type by key (config/key_types.py) matches what parsing yields: every declared key sits in
the one group of its kind and default, and the groups name no key that keys.py does not declare."""

from __future__ import annotations

from typing import get_args

from sink_engine.config import key_types, parse_config
from sink_engine.config.keys import KEYS, Key
from tests.builders import connector_keys

GROUPS = {
    "TextKey": key_types.TextKey,
    "OptionalTextKey": key_types.OptionalTextKey,
    "IntKey": key_types.IntKey,
    "BoolKey": key_types.BoolKey,
    "ListKey": key_types.ListKey,
    "OptionalListKey": key_types.OptionalListKey,
}
BASES = {"string": "Text", "choice": "Text", "class": "Text", "int": "Int", "bool": "Bool", "list": "List"}


def _group(key: Key) -> str:
    """The group a key belongs in: its value's type from its kind, Optional when its default is None."""
    return ("Optional" if key.default is None else "") + BASES[key.kind] + "Key"


def test_every_declared_key_is_typed_by_its_kind_and_default():
    # given the groups of key_types.py, by key
    grouped: dict[str, list[str]] = {}
    for group, literal in GROUPS.items():
        for name in get_args(literal):
            grouped.setdefault(name, []).append(group)
    # then each declared key sits in exactly its group, and no group names an undeclared key
    wrong = [
        f"{k.name}: {grouped.get(k.name)} (expected {_group(k)})" for k in KEYS if grouped.get(k.name) != [_group(k)]
    ]
    assert wrong == []
    assert set(grouped) - {k.name for k in KEYS} == set()


def test_parsed_values_have_the_type_their_group_declares():
    # given a parsed config with every default applied
    raw = {"topics": "a, b", "flush.size": "1000", "format.class": "JsonFormat", "bootstrap.servers": "k:9092"}
    config = parse_config({"name": "c", **connector_keys(raw)})
    expected = {"Text": str, "Int": int, "Bool": bool, "List": tuple}
    # then each key's value is of its group's type (or None where the group is Optional)
    for key in KEYS:
        value, group = config.values[key.name], _group(key)
        optional_none = group.startswith("Optional") and value is None
        assert optional_none or isinstance(value, expected[BASES[key.kind]]), (key.name, value)
