"""The trigger's use cases: an MSK batch and the idle-flush tick, each deciding per connector whether to start a run."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from lambdas.trigger.pending import Pending, Thresholds, backlog, merge, should_start, summarize
from lambdas.trigger.runs import JobSpec, Outcome, RunStarter
from lambdas.trigger.state import TriggerState


@dataclass(frozen=True)
class Connector:
    name: str
    topics: tuple[str, ...]
    config_uri: str


@dataclass(frozen=True)
class Decision:
    connector: str
    pending: Pending
    outcome: Outcome


class TriggerService:
    def __init__(self, connectors: Iterable[Connector], state: TriggerState, starter: RunStarter,
                 thresholds: Thresholds, clock: Callable[[], int]):
        self._connectors = tuple(connectors)
        self._state, self._starter, self._thresholds, self._clock = state, starter, thresholds, clock

    def on_batch(self, records: Iterable[tuple[str, int, int, int]]) -> list[Decision]:
        """Record what an MSK batch adds for each connector reading its topics, then decide for those connectors."""
        batch = summarize(records)
        touched = [c for c in self._connectors if any(tp[0] in c.topics for tp in batch)]
        return [self._decide(c, {tp: s for tp, s in batch.items() if tp[0] in c.topics}) for c in touched]

    def on_tick(self) -> list[Decision]:
        """The idle flush: decide for every connector from what is stored, so a quiet topic still gets written."""
        return [self._decide(c, {}) for c in self._connectors]

    def _decide(self, connector: Connector, batch: Mapping) -> Decision:
        committed = self._state.committed(connector.name)
        stored = self._state.markers(connector.name)
        seen = {}
        for tp in set(stored) | set(batch):
            merged = merge(stored.get(tp), batch.get(tp), committed.get(tp, 0))
            if merged is not None:
                seen[tp] = merged
                if merged != stored.get(tp):
                    self._state.save_marker(connector.name, tp[0], tp[1], merged)
        pending = backlog(seen, committed)
        now = self._clock()
        reason = should_start(pending, now, self._thresholds)
        if reason is None:
            return Decision(connector.name, pending, Outcome(connector.name, "skipped", "below-thresholds"))
        return Decision(connector.name, pending, self._starter.start(connector.name, connector.config_uri, reason, now))


def connectors_from_json(text: str) -> list[Connector]:
    """The CONNECTORS environment value: a JSON list of {name, topics, config_uri}."""
    return [Connector(c["name"], tuple(c["topics"]), c["config_uri"]) for c in json.loads(text)]


def job_from_env(env: Mapping[str, str]) -> JobSpec:
    return JobSpec(env["APPLICATION_ID"], env["JOB_ROLE_ARN"], env["ENTRY_POINT"], env["SPARK_PARAMETERS"],
                   int(env["JOB_TIMEOUT_MINUTES"]))
