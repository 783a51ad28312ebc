"""One EMR job run for the connectors due at once: `sink-engine run --config A --config B ...`, each connector run
as if alone in one Spark application (sink_engine/cli_run.py, driver/many.py: its own lease, plan and commit, so
exactly-once stays per connector), up to `connectors_per_run` connectors a run.

Which connectors share a run: those whose runs `RunStarter.prepare` claimed in one invocation (each its own claim,
attempt n+1, after its lease and its previous run were checked), grouped by job role, as StartJobRun runs one
`executionRoleArn` (StartJobRun, EMR Serverless API Reference), in the order they were decided. Before StartJobRun
each member's claim records the run's client token, its configs and its workers (`TriggerState.record_batch`,
conditional on the claim's attempt: a member whose claim moved on meanwhile is left out and the run composed again),
then the run's id is recorded on each. A claim whose run was composed but whose StartJobRun was refused, or whose
answer was lost, is resumed with the same request (its token returns the run already started), whatever else is due.
A run of one connector is the request of before batching: token of (connector, attempt), `<connector>-<attempt>`.

Limits (the facts it stands on):
- The arguments: `entryPointArguments` holds at most 1,024 items (SparkSubmit, EMR Serverless API Reference,
  https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_SparkSubmit.html), `run` and two per
  connector: at most MAX_CONNECTORS_PER_RUN connectors, each named by its config's S3 URI (short: no manifest).
- StartJobRun: 1 call per second with a burst of 25 per account ("Endpoints and quotas for EMR Serverless", EMR
  Serverless User Guide, https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/endpoints-quotas.html).
  An invocation makes at most START_BURST of them; the connectors of the runs past it are skipped (`start-budget`)
  and keep their claims, so the next invocation (a tick a minute or more later: the burst has refilled) starts them.
- The default of 25 connectors a run (`trigger.connectors_per_run`): 500 connectors due on one tick start in 20
  runs, within the burst with room for table upkeep. `make bench-configs` (docs/performance/index.md) measured one
  small connector alone 43.9 s, ten in one application 61.2 s (ten separate runs 404.5 s): about 2 s more per
  connector once the application started, so the last of 25 lands about 50 s after the first, and a run that fails
  (its job timeout, a lost driver) is retried for 25 connectors, not for 500.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from lambdas.trigger.runs import JobSpec, Outcome, Ready, client_token
from lambdas.trigger.state import TriggerState

if TYPE_CHECKING:
    from sink_engine.aws_types import EMRServerlessClient

Run = tuple[str, tuple[str, ...], str]  # a composed run: its client token, configs and workers' `--conf`s

CONNECTORS_PER_RUN = 25  # the default of `trigger.connectors_per_run`
MAX_CONNECTORS_PER_RUN = (1024 - 1) // 2  # entryPointArguments' 1,024 items: `run`, then `--config URI` each
START_BURST = 25  # StartJobRun's burst: the calls one invocation makes at most


def batch_token(members: Sequence[tuple[str, int]]) -> str:
    """The client token of a run of these (connector, attempt) members: one's is `client_token`'s."""
    if len(members) == 1:
        return client_token(*members[0])
    seed = "batch#" + "\n".join(f"{name}#{attempt}" for name, attempt in members)
    return hashlib.sha256(seed.encode()).hexdigest()[:64]


def run_arguments(configs: Sequence[str]) -> list[str]:
    """The engine CLI's arguments of a bounded run of every config in `configs`."""
    return ["run", *(arg for config in configs for arg in ("--config", config))]


def compose(ready: Sequence[Ready], per_run: int) -> list[list[Ready]]:
    """The job runs of the claimed connectors: those whose claim names a run already, by that run; the others by job
    role, in order, `per_run` at most a run."""
    resumed: dict[str, list[Ready]] = {}
    fresh: dict[str, list[Ready]] = {}
    for r in ready:
        if r.claim.batch is not None:
            resumed.setdefault(r.claim.batch, []).append(r)
        else:
            fresh.setdefault(r.connector.role_arn, []).append(r)
    runs = list(resumed.values())
    for members in fresh.values():
        runs += [members[i : i + per_run] for i in range(0, len(members), per_run)]
    return runs


class BatchStarter:
    """Starts the claimed connectors' runs (module docstring), `per_run` connectors a run at most."""

    def __init__(
        self, state: TriggerState, emr: EMRServerlessClient, job: JobSpec, per_run: int = CONNECTORS_PER_RUN
    ) -> None:
        if not 1 <= per_run <= MAX_CONNECTORS_PER_RUN:
            raise ValueError(f"connectors per run must be 1 to {MAX_CONNECTORS_PER_RUN}, not {per_run}")
        self._state, self._emr, self._job, self._per_run = state, emr, job, per_run

    def start(self, ready: Sequence[Ready]) -> dict[str, Outcome]:
        """Each claimed connector's outcome, by name: started or resumed in a run (its id), or skipped."""
        outcomes: dict[str, Outcome] = {}
        for calls, members in enumerate(compose(ready, self._per_run)):
            if calls >= START_BURST:
                outcomes.update((r.connector.name, Outcome("skipped", "start-budget")) for r in members)
            else:
                outcomes.update(self._start(members))
        return outcomes

    def _start(self, members: list[Ready]) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        claim = members[0].claim
        run: Run = (claim.batch or "", claim.configs, claim.sizes or "")
        if claim.batch is None:
            members, left_out, run = self._record(members)
            outcomes.update((name, Outcome("skipped", "claimed-concurrently")) for name in left_out)
            if not members:
                return outcomes
        try:
            answer = self._emr.start_job_run(**self._request(members[0], run))
        except ClientError as e:  # the claims stay: the next call resumes them, or they expire as failed runs
            reason = f"start-failed: {e.response['Error']['Code']}"
            return {**outcomes, **{r.connector.name: Outcome("skipped", reason) for r in members}}
        job_run_id = answer["jobRunId"]
        for r in members:
            self._state.record_job_run(r.connector.name, r.claim.attempt, job_run_id)
            outcomes[r.connector.name] = Outcome(r.action, r.reason, job_run_id)
        return outcomes

    def _record(self, members: list[Ready]) -> tuple[list[Ready], list[str], Run]:
        """Record the run on each member's claim: the members kept, the names left out (their claims moved on), the
        run recorded."""
        left_out: list[str] = []
        run: Run = ("", (), "")
        while members:
            token = batch_token([(r.connector.name, r.claim.attempt) for r in members])
            run = (token, tuple(r.connector.config_uri for r in members), self._sizes(members))
            kept = [r for r in members if self._state.record_batch(r.connector.name, r.claim, *run)]
            if len(kept) == len(members):
                break
            left_out += [r.connector.name for r in members if r not in kept]
            members = kept
        return members, left_out, run

    def _sizes(self, members: list[Ready]) -> str:
        """The run's workers; a lone connector's claim sized before batching keeps its sizes."""
        if len(members) == 1 and members[0].claim.sizes is not None:
            return members[0].claim.sizes
        return self._job.sizes([(r.connector, r.pending) for r in members])

    def _request(self, first: Ready, run: Run) -> dict:
        """The StartJobRun request of the run the members' claims recorded, as the role of `first`, one of them."""
        token, configs, sizes = run
        if len(configs) == 1:
            tags = {"attempt": str(first.claim.attempt)}
            name = f"{first.connector.name}-{first.claim.attempt}"
            return self._job.start_request(first.connector, run_arguments(configs), token, name, tags, sizes)
        tags = {"batch": token[:16], "connectors": str(len(configs))}
        name = f"batch-{len(configs)}-{token[:12]}"
        return self._job.request(first.connector.role_arn, run_arguments(configs), token, name, tags, sizes)
