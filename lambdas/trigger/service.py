"""The trigger's use cases: an MSK batch, the idle-flush tick and a forced run, each deciding per connector.

A batch records what it adds (per topic-partition markers) for each connector reading its topics, then decides
for those connectors; the tick decides for every connector from what is stored, without reading Kafka: it
knows the offsets the event source delivered (markers), the engine's commits and the clock, so it can start the
runs that a scheduled or wall-clock rotation makes due, and the first run of a topic that never had one. The runs
due in one invocation start together, several connectors a job run (lambdas/trigger/batches.py).

A continuous connector (its index entry's `continuous`) gets no bounded runs: on any batch of its topics, the tick or a
forced run, its continuous job is kept running (lambdas/trigger/continuous.py), whatever would close; the tick also
cancels the STREAMING runs no continuous connector owns any more (`sweep_streaming`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from itertools import chain

from lambdas.trigger.batches import BatchStarter
from lambdas.trigger.connectors import Connector
from lambdas.trigger.continuous import Cancelled, ContinuousRuns
from lambdas.trigger.errors import UnknownRequestError
from lambdas.trigger.pending import Pending, Seen, backlog, merge, summarize
from lambdas.trigger.restore import RestoreRequest
from lambdas.trigger.restore_runs import RestoreRun, RestoreRuns, Settled, settle
from lambdas.trigger.rules import closing, worth_saving
from lambdas.trigger.runs import Outcome, Ready, RunStarter
from lambdas.trigger.state import TriggerState


@dataclass(frozen=True)
class Decision:
    connector: str
    at_ms: int
    pending: Pending
    outcome: Outcome
    where: str | None = None  # the topic or topic-partition whose file would close


@dataclass(frozen=True)
class _Judged:
    """A connector's decision, and its claimed run when one is to start (the decision's outcome then replaced by
    the run's once the job runs started)."""

    decision: Decision
    ready: Ready | None = None


class TriggerService:
    """`connectors` gives the deployed connectors whenever asked (the connector index's `get`: its copy, read again
    once it is older than the TTL)."""

    def __init__(
        self,
        connectors: Callable[[], Iterable[Connector]],
        state: TriggerState,
        starter: RunStarter,
        clock: Callable[[], int],
        restores: RestoreRuns,
        continuous: ContinuousRuns,
        batches: BatchStarter,
    ):
        self._deployed, self._state, self._starter, self._clock = connectors, state, starter, clock
        self._restores, self._continuous, self._batches = restores, continuous, batches

    @property
    def _connectors(self) -> dict[str, Connector]:
        return {c.name: c for c in self._deployed()}

    @property
    def topics(self) -> list[str]:
        """Every topic a connector reads (each needs an event source mapping)."""
        return sorted({t for c in self._connectors.values() for t in c.topics})

    def on_batch(self, records_by_partition: Mapping[str, list]) -> list[Decision]:
        """An MSK event's `records` ("<topic>-<partition>" -> records): markers, then a decision for each
        connector that reads one of its topics."""
        topics = {records[0]["topic"] for records in records_by_partition.values() if records}
        touched = [c for c in self._connectors.values() if topics.intersection(c.topics)]
        return self._decide_all([(c, chain.from_iterable(records_by_partition.values())) for c in touched])

    def on_tick(self) -> list[Decision]:
        """The idle flush: decide for every connector from what is stored."""
        return self._decide_all([(c, None) for c in self._connectors.values()])

    def force(self, name: str | None) -> Decision:
        """Start a run of `name` now unless one is active, whatever the rules and the backoff say."""
        (decision,) = self._decide_all([(self._deployed_one(name), None)], forced=True)
        return decision

    def maintain(self, name: str | None, scheduled_at: str | None) -> Outcome:
        """Start the table upkeep of `name` (IcebergFormat) for the tick at `scheduled_at` (None: now);
        UnknownRequestError for a connector that writes S3 objects (its job would fail on its config)."""
        connector = self._deployed_one(name)
        if not connector.tables:
            raise UnknownRequestError(
                f"connector {name!r} writes S3 objects, not Iceberg tables: there is nothing to maintain"
            )
        return self._starter.start_maintenance(connector, scheduled_at or str(self._clock()))

    def doctor(self, name: str | None, requested_at: str | None) -> Outcome:
        """Start a `sink-engine doctor` run of `name` (requested at `requested_at`; None: now), whatever its lease:
        the doctor reads the lease and writes only its probes."""
        return self._starter.start_doctor(self._deployed_one(name), requested_at or str(self._clock()))

    def restore(self, event: dict) -> tuple[RestoreRequest, Outcome]:
        """Start a `sink-engine restore` run of a restore request (lambdas/trigger/restore.py), checked first:
        UnknownRequestError for a connector not deployed, RestoreRequestError naming a field the connector's index
        entry does not allow; the engine's own lease keeps two restores into one target apart."""
        connector = self._deployed_one(event.get("connector"))
        request = RestoreRequest.from_event(event, connector.name, connector.topics, connector.restore_targets)
        requested_at = event.get("time") or str(self._clock())
        token = request.token(connector.name, requested_at)
        checkpoint = self._restores.checkpoint_at_ms(request)
        outcome = self._starter.start_restore(connector, request, token)
        assert outcome.job_run_id is not None  # a started restore names its run
        self._restores.record(
            connector.name, RestoreRun(token, request, requested_at, 1, outcome.job_run_id, checkpoint)
        )
        return request, outcome

    def resume_restores(self) -> list[Settled]:
        """The idle flush's look at the restores it started (restore_runs.py): the ended ones settled, those that
        ended with progress started again."""
        settled = []
        for connector in self._connectors.values():
            if connector.restore_targets:
                settled += settle(
                    self._restores, connector.name, self._starter.job_state, partial(self._restart, connector)
                )
        return settled

    def sweep_streaming(self) -> list[Cancelled]:
        """The tick's cancellation of the STREAMING runs no continuous connector owns (continuous.py)."""
        return self._continuous.sweep(self._connectors.values(), self._clock())

    def _restart(self, connector: Connector, run: RestoreRun) -> str:
        """Start the next attempt of `run`; its job run id."""
        job_run_id = self._starter.start_restore(connector, run.request, run.next_token()).job_run_id
        assert job_run_id is not None  # a started restore names its run
        return job_run_id

    def _deployed_one(self, name: str | None) -> Connector:
        """The deployed connector `name` (an event's, None when it names none); UnknownRequestError otherwise."""
        connectors = self._connectors
        if name is None or name not in connectors:
            raise UnknownRequestError(f"connector {name!r} is not deployed ({', '.join(sorted(connectors))})")
        return connectors[name]

    def _decide_all(self, due: list[tuple[Connector, Iterable | None]], forced: bool = False) -> list[Decision]:
        """Each connector's decision; the runs of those due start together, several connectors a job run
        (lambdas/trigger/batches.py)."""
        self._starter.begin()
        judged = [self._decide(connector, records, forced) for connector, records in due]
        started = self._batches.start([j.ready for j in judged if j.ready is not None])
        return [replace(j.decision, outcome=started[j.ready.connector.name]) if j.ready else j.decision for j in judged]

    def _decide(self, connector: Connector, records: Iterable | None, forced: bool = False) -> _Judged:
        committed = self._state.committed(connector.name)
        markers = self._state.markers(connector.name)
        offsets = {tp: c.next_offset for tp, c in committed.items()}
        seen: dict[tuple[str, int], Seen] = {tp: merge(s, None, offsets.get(tp, 0)) for tp, s in markers.items()}
        now = self._clock()
        if records is not None:
            batch = {
                tp: merge(seen.get(tp), s, offsets.get(tp, 0))
                for tp, s in summarize(records, offsets, connector.topics).items()
            }
            self._state.save_markers(
                connector.name,
                {
                    tp: merged
                    for tp, merged in batch.items()
                    if worth_saving(connector.rotation, seen.get(tp), merged, committed.get(tp), now)
                },
            )
            seen.update(batch)
        pending = backlog(seen, committed)
        last_commit = max((c.committed_at_ms for c in committed.values()), default=0)
        if connector.continuous is not None:
            kept = self._continuous.keep(connector, now, last_commit, forced)
            return _Judged(Decision(connector.name, now, pending, kept))
        found = ("forced", None) if forced else closing(connector.rotation, connector.topics, seen, committed, now)
        if found is None:
            return _Judged(Decision(connector.name, now, pending, Outcome("skipped", "nothing-closes")))
        reason, where = found
        prepared = self._starter.prepare(connector, reason, now, last_commit, forced, pending)
        if isinstance(prepared, Outcome):
            return _Judged(Decision(connector.name, now, pending, prepared, where))
        return _Judged(Decision(connector.name, now, pending, Outcome("skipped", "not-started"), where), prepared)
