"""Predicates (Kafka's PredicatesTest cases) and Filter."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.transform.filter import Filter
from sink_engine.transform.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from tests.unit.transform.helpers import options, record


@pytest.mark.parametrize(
    "pattern, topic, matches",
    [
        ("my-prefix-.*", "my-prefix-", True),
        ("my-prefix-.*", "my-prefix-foo", True),
        ("my-prefix-.*", "x-my-prefix-", False),  # a full match, not a search
        ("my-prefix-.*", "x-my-prefix-foo", False),
        ("my-prefix-.*", "your-prefix-", False),
        ("my-prefix-.*", "your-prefix-foo", False),
        ("(?<kind>orders)-.*", "orders-eu", True),
    ],
)
def test_topic_name_matches_the_whole_current_topic(pattern, topic, matches):
    predicate = TopicNameMatches.from_options(options(prefix="predicates.", pattern=pattern))
    assert predicate.test(record(topic)) is matches


@pytest.mark.parametrize("values", [{}, {"pattern": ""}, {"pattern": "["}, {"pattern": "*"}])
def test_topic_name_matches_needs_a_valid_pattern(values):
    with pytest.raises(ConfigError) as raised:
        TopicNameMatches.from_options(options(prefix="predicates.", **values))
    assert raised.value.key == "predicates.t.pattern"


@pytest.mark.parametrize(
    "headers, matches",
    [
        ((), False),
        ((("foo", None),), False),
        ((("foo", None), ("bar", None)), False),
        ((("other", b"1"),), False),
        ((("other", b"1"), ("my-header", None)), True),  # a header with a null value still counts
        ((("my-header", b"1"), ("my-header", b"2")), True),
    ],
)
def test_has_header_key(headers, matches):
    # HasHeaderKeyTest.testTest, with "my-header" for "foo"
    predicate = HasHeaderKey.from_options(options(prefix="predicates.", name="my-header"))
    assert predicate.test(record(headers=headers)) is matches


@pytest.mark.parametrize("values", [{}, {"name": ""}])
def test_has_header_key_needs_a_name(values):
    with pytest.raises(ConfigError) as raised:
        HasHeaderKey.from_options(options(prefix="predicates.", **values))
    assert raised.value.key == "predicates.t.name"


@pytest.mark.parametrize("value, matches", [(None, True), ({"a": 1}, False), ("", False), (b"", False)])
def test_record_is_tombstone(value, matches):
    assert RecordIsTombstone.from_options(options(prefix="predicates.")).test(record(value=value)) is matches


@pytest.mark.parametrize("value", [None, {"a": 1}, "text"])
def test_filter_drops_every_record(value):
    assert Filter.from_options(options()).apply(record(value=value)) is None
