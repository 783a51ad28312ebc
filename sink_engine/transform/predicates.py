"""Kafka Connect's predicates (org.apache.kafka.connect.transforms.predicates): which records a transform with
`transforms.<alias>.predicate` applies to."""

from __future__ import annotations

import re

from sink_engine.errors import ConfigError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord


class TopicNameMatches:
    """`pattern`: a Java regular expression that matches the record's current topic in full."""

    def __init__(self, pattern: re.Pattern):
        self._pattern = pattern

    @classmethod
    def from_options(cls, options: TransformOptions) -> TopicNameMatches:
        return cls(java_regex(options.string("pattern"), options.key("pattern")))

    def test(self, record: TransformRecord) -> bool:
        return self._pattern.fullmatch(record.topic) is not None


class HasHeaderKey:
    """`name`: true when the record has at least one header of that name."""

    def __init__(self, name: str):
        self._name = name

    @classmethod
    def from_options(cls, options: TransformOptions) -> HasHeaderKey:
        value = options.values.get("name")
        if value is None or str(value) == "":
            raise ConfigError(options.key("name"), "is required: the header name to look for")
        return cls(str(value))

    def test(self, record: TransformRecord) -> bool:
        return any(header.name == self._name for header in record.headers)


class RecordIsTombstone:
    """True when the record's value is null."""

    @classmethod
    def from_options(cls, options: TransformOptions) -> RecordIsTombstone:
        return cls()

    def test(self, record: TransformRecord) -> bool:
        return record.value is None


_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z])")


def java_regex(pattern: str, key: str) -> re.Pattern:
    """A Java regular expression compiled by Python's `re` (`(?<name>...)` groups as `(?P<name>...)`); ConfigError
    naming `key` when it does not compile."""
    try:
        return re.compile(_NAMED_GROUP.sub("(?P<", pattern))
    except re.error as e:
        raise ConfigError(key, f"{pattern!r} is not a valid regular expression: {e}") from None
