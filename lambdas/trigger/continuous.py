"""Keep one continuous job running per continuous connector (its index entry's `continuous`; the environment's
`continuous.connectors.<name>`): an EMR Serverless STREAMING job run of `sink-engine run --continuous`.

On any MSK batch of its topics, the idle-flush tick or a forced run, for such a connector: if the run of its `RUN`
claim is active (QUEUED ... CANCELLING), nothing starts; if it ended (or there is none), the claim is settled as a
bounded run's is, and once the lease is free a new claim (attempt n+1, conditional) starts the next run with the
client token of (connector, attempt): two invocations at once start one run, and a retried StartJobRun returns the run
already started. After n failed runs in a row the next one waits the trigger's backoff, as bounded runs do; a run
that made progress (took the lease and committed) counts as the first failure of a new streak.

The claim keeps the `fingerprint` of what its run runs: the published config's hash, the retry policy, the job's
entry point and Spark parameters (a redeploy with a new archive changes them) and its workers. When the connector's
fingerprint differs from its running run's (its config, settings or the job changed), the trigger cancels the run
with a grace period (CancelJobRun `shutdownGracePeriodInSeconds`, the connector's `shutdown_grace_seconds`: its lease
duration and a margin), in which the job stops its tasks, commits what they closed and releases the lease; the claim
records the cancellation, so that the run's end is no failure (`restarted`), and the next call after it ended starts
the new run. While the run holds the engine's lease (taken after its claim, renewed every third of its duration) it
is active, and a batch asks EMR nothing (GetJobRun only when the lease is free). The idle-flush tick also cancels,
the same way, every active STREAMING run tagged `mode=continuous` that no claim of a continuous connector owns: the
job of a connector that no longer opts in or was removed, or a run its claim superseded (`sweep`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from lambdas.trigger.connectors import Connector
from lambdas.trigger.runs import QUEUED, JobSpec, Outcome, RunStarter
from lambdas.trigger.sizing import continuous_run, fit
from lambdas.trigger.state import FAILED, RunClaim, TriggerState

REASON = "continuous"  # an Outcome's reason for a continuous job started or resumed


def fingerprint(connector: Connector, job: JobSpec, sizes: str) -> str:
    """What a continuous run of `connector` runs, hashed: its config, its retry policy, the job and its workers."""
    continuous = connector.continuous
    assert continuous is not None  # only continuous connectors have continuous runs
    what = [
        continuous.config_sha256,
        continuous.max_failed_attempts_per_hour,
        connector.role_arn,
        job.entry_point,
        job.spark_parameters,
        sizes,
    ]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:32]


def continuous_sizes(connector: Connector, job: JobSpec) -> str:
    """The `--conf`s of a continuous run's workers (sizing.continuous_run), within the application's capacity."""
    plan = continuous_run(connector.shape, job.max_executors, connector.tables)
    return fit(plan.driver, plan.executor, plan.executors, job.capacity).spark_parameters()


@dataclass(frozen=True)
class Cancelled:
    """A STREAMING run the sweep cancelled: its connector (from its tags), run id and why."""

    connector: str
    job_run_id: str
    reason: str  # not-continuous | superseded


class ContinuousRuns:
    def __init__(self, state: TriggerState, starter: RunStarter, job: JobSpec):
        self._state, self._starter, self._job = state, starter, job

    def keep(self, connector: Connector, now_ms: int, last_commit_ms: int, forced: bool = False) -> Outcome:
        """Start `connector`'s continuous job unless one is active; cancel the active one when its fingerprint is
        not the connector's (see the module docstring). `forced` skips the backoff. Safe to call again."""
        name, continuous = connector.name, connector.continuous
        assert continuous is not None  # only continuous connectors are kept running
        sizes = continuous_sizes(connector, self._job)
        wanted = fingerprint(connector, self._job, sizes)
        lease = self._state.lease(name)
        epoch = lease.epoch if lease else 0
        claim = self._state.claim(name)
        failures = claim.failures if claim else 0
        held = lease is not None and lease.held(now_ms) and epoch > (claim.lease_epoch if claim else epoch)
        if claim and claim.outcome is None and claim.job_run_id and held:  # its run took the lease and renews it
            return self._while_active(connector, claim, wanted, "active", now_ms)
        if claim and claim.outcome is None:
            verdict = self._starter.verdict(claim, epoch, now_ms, last_commit_ms)
            if verdict in ("active", QUEUED):
                return self._while_active(connector, claim, wanted, verdict, now_ms)
            if verdict == "resume":
                if not claim.continuous:  # a bounded run's claim not started yet: it starts as it was claimed
                    return Outcome("skipped", "bounded-run-active")
                return self._starter.submit_streaming(connector, claim, "resumed", REASON)
            progressed = epoch > claim.lease_epoch and last_commit_ms >= claim.claimed_at_ms
            settled = self._state.settle(name, claim, verdict, now_ms)
            if settled is None:
                return Outcome("skipped", "claimed-concurrently")
            claim = settled
            failures = 1 if claim.outcome == FAILED and progressed else claim.failures
        if lease and lease.held(now_ms):  # a run still stopping (or a bounded one ending) holds it
            return Outcome("skipped", "lease-held")
        fresh = self._starter.claim_next(name, claim, failures, epoch, now_ms, forced, sizes, wanted)
        if isinstance(fresh, Outcome):
            return fresh
        return self._starter.submit_streaming(connector, fresh, "started", REASON)

    def sweep(self, connectors: Iterable[Connector], now_ms: int) -> list[Cancelled]:
        """Cancel, with the grace period they were started with (their tags), the active STREAMING runs of this
        trigger that no continuous connector's claim owns."""
        deployed = {c.name: c for c in connectors}
        cancelled = []
        for run in self._starter.streaming_runs():
            tags = run.get("tags") or {}
            name, attempt = tags.get("connector", ""), tags.get("attempt", "")
            claim = self._state.claim(name) if name else None
            owned = (
                claim is not None
                and str(claim.attempt) == attempt
                and claim.outcome is None
                and claim.job_run_id in (None, run["jobRunId"])
            )
            connector = deployed.get(name)
            if connector is not None and connector.continuous is not None and owned:
                continue
            reason = "superseded" if connector is not None and connector.continuous is not None else "not-continuous"
            grace = int(tags.get("shutdown_grace_seconds") or 0) or None
            if self._starter.cancel(run["jobRunId"], grace or _grace(connector)):
                cancelled.append(Cancelled(name, run["jobRunId"], reason))
            if owned and claim is not None:  # its end is no failure: the connector's next run starts at once
                self._state.mark_cancelled(name, claim, reason, now_ms)
        return cancelled

    def _while_active(self, connector: Connector, claim: RunClaim, wanted: str, verdict: str, now_ms: int) -> Outcome:
        """The claim's run is active: cancel it when it runs something else than `wanted`, else nothing to do."""
        if claim.continuous and claim.fingerprint != wanted and claim.cancelled_at_ms is None:
            return self._cancel(connector, claim, "config-changed", now_ms)
        return Outcome("skipped", _waiting(claim, verdict), claim.job_run_id)

    def _cancel(self, connector: Connector, claim: RunClaim, reason: str, now_ms: int) -> Outcome:
        assert connector.continuous is not None and claim.job_run_id is not None  # an active run has its id
        self._starter.cancel(claim.job_run_id, connector.continuous.shutdown_grace_seconds)
        self._state.mark_cancelled(connector.name, claim, reason, now_ms)
        return Outcome("cancelled", reason, claim.job_run_id)


def _waiting(claim: RunClaim, verdict: str) -> str:
    """Why nothing starts while the claim's run is active."""
    if verdict == QUEUED:
        return "run-queued"
    if claim.cancelled_at_ms is not None:
        return "run-stopping"
    return "run-active" if claim.continuous else "bounded-run-active"


def _grace(connector: Connector | None) -> int:
    """The grace period of a run whose tags do not say it: its connector's, else the longest CancelJobRun allows."""
    if connector is not None and connector.continuous is not None:
        return connector.continuous.shutdown_grace_seconds
    return 1800
