"""A policy's resource list stays exact while it fits ARN_LIST_BUDGET and becomes one wildcard past it."""

import pytest

from infra.arn_lists import ARN_LIST_BUDGET, listed_or_wildcard
from infra.settings import load_settings

MSK = load_settings("dev").msk


@pytest.mark.parametrize("kind, wildcard", [("topic", "*"), ("group", "sink-trigger-dev-*")])
def test_a_list_within_the_budget_is_exact_and_one_past_it_is_a_wildcard(kind, wildcard):
    arn = len(MSK.resource_arn(kind, "t-0000"))
    fitting = [f"t-{i:04d}" for i in range(ARN_LIST_BUDGET // arn)]
    assert listed_or_wildcard(MSK, kind, fitting, wildcard) == [MSK.resource_arn(kind, n) for n in fitting]
    past = [*fitting, "t-9999"]
    assert listed_or_wildcard(MSK, kind, past, wildcard) == [MSK.resource_arn(kind, wildcard)]
