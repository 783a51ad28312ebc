"""The chain: order, predicates and negate, drops, and errors naming the record and the alias."""

from __future__ import annotations

import pytest

from sink_engine.errors import TransformationError
from sink_engine.transform.chain import ChainStep, TransformChain
from sink_engine.transform.errors import TransformError
from sink_engine.transform.filter import Filter
from sink_engine.transform.predicates import TopicNameMatches
from tests.unit.transform.helpers import options, record


class Append:
    """A test double: appends its mark to the value (a list), or fails on a value holding "bad"."""

    def __init__(self, mark: str):
        self.mark = mark

    def apply(self, r):
        if "bad" in r.value:
            raise TransformError("bad value")
        return r.with_changes(value=[*r.value, self.mark])


def topic_is(pattern: str) -> TopicNameMatches:
    return TopicNameMatches.from_options(options(prefix="predicates.", pattern=pattern))


def test_transforms_apply_in_order():
    chain = TransformChain((ChainStep("a", Append("a")), ChainStep("b", Append("b"))))
    assert chain.apply(record(value=[])).value == ["a", "b"]


@pytest.mark.parametrize(
    "topic, negate, applied",
    [("orders", False, True), ("other", False, False), ("orders", True, False), ("other", True, True)],
)
def test_a_predicate_selects_where_test_differs_from_negate(topic, negate, applied):
    chain = TransformChain((ChainStep("a", Append("a"), topic_is("orders"), negate),))
    assert chain.apply(record(topic, value=[])).value == (["a"] if applied else [])


def test_a_dropped_record_is_not_seen_by_later_transforms():
    chain = TransformChain((ChainStep("drop", Filter(), topic_is("orders")), ChainStep("b", Append("bad"))))
    assert chain.apply(record("orders", value=["bad"])) is None
    with pytest.raises(TransformationError):
        chain.apply(record("other", value=["bad"]))


def test_a_transform_error_names_the_record_and_alias():
    chain = TransformChain((ChainStep("first", Append("a")), ChainStep("second", Append("b"))))
    failing = record("orders", value=["bad"]).with_changes(topic="routed", partition=3, offset=42)
    with pytest.raises(TransformationError) as raised:
        chain.apply(failing)
    error = raised.value
    assert (error.topic, error.partition, error.offset) == ("orders", 3, 42)  # where it was read, not routed
    assert "'first'" in error.cause and "bad value" in error.cause
    assert error.executing_class.endswith("test_chain.Append")
