"""Health of the trigger's own MSK event source mappings.

A mapping that cannot reach or read the cluster invokes nothing, so no other metric reports it (the idle-flush
schedule keeps invoking the trigger). On each idle-flush tick the trigger calls `report`, which lists its mappings,
logs each problem (EVENT_SOURCE_MAPPING_UNHEALTHY) and publishes METRIC, the number of problems, in Powertools'
namespace with its `service` dimension; the `EventSourceMappings` alarm fires when it stays above zero.

A mapping is healthy when its State is Enabled and its LastProcessingResult is absent or one of HEALTHY_RESULTS;
anything else (Creating, Disabled, "PROBLEM: Connection error ...", an authorization failure) is a problem, and so
is a topic with no mapping. Transitional states count too: the alarm waits for several ticks before firing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit, single_metric

if TYPE_CHECKING:
    from sink_engine.aws_types import LambdaClient

METRIC = "UnhealthyEventSourceMappings"
HEALTHY_RESULTS = frozenset({"OK", "No records processed"})


@dataclass(frozen=True)
class MappingProblem:
    topic: str | None  # None for a mapping without topics (not an MSK mapping)
    uuid: str | None  # None when the topic has no mapping at all
    state: str | None
    detail: str  # LastProcessingResult / StateTransitionReason, or why the mapping is missing


def problems(mappings: Iterable[dict], topics: Iterable[str]) -> list[MappingProblem]:
    """The problems of `mappings` (items of ListEventSourceMappings) given the `topics` that must each be read by
    one of them: an unhealthy mapping, or a topic no mapping reads."""
    found: list[MappingProblem] = []
    covered: set[str] = set()
    for mapping in mappings:
        mapping_topics = mapping.get("Topics") or [None]
        covered.update(t for t in mapping_topics if t)
        state, result = mapping.get("State"), mapping.get("LastProcessingResult")
        if state == "Enabled" and (not result or result in HEALTHY_RESULTS):
            continue
        detail = result if result and result not in HEALTHY_RESULTS else mapping.get("StateTransitionReason", "")
        found.extend(MappingProblem(t, mapping.get("UUID"), state, detail) for t in mapping_topics)
    found.extend(
        MappingProblem(t, None, None, "no event source mapping reads this topic") for t in sorted(set(topics) - covered)
    )
    return found


def check(client: LambdaClient, function_name: str, topics: Iterable[str]) -> list[MappingProblem]:
    """List every event source mapping of `function_name` with the Lambda `client` (needs
    lambda:ListEventSourceMappings) and return their problems against `topics`."""
    pages = client.get_paginator("list_event_source_mappings").paginate(FunctionName=function_name)
    return problems((m for page in pages for m in page["EventSourceMappings"]), topics)


def report(client: LambdaClient, function_name: str, topics: Iterable[str], logger: Logger) -> list[MappingProblem]:
    """`check`, then log each problem with `logger` (a Powertools Logger) and publish METRIC; returns the problems."""
    found = check(client, function_name, topics)
    for problem in found:
        logger.warning("EVENT_SOURCE_MAPPING_UNHEALTHY", extra=asdict(problem))
    with single_metric(name=METRIC, unit=MetricUnit.Count, value=len(found)):
        pass
    return found
