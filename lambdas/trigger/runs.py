"""Start at most one job run per connector: the engine's lease, the trigger's run claim, a deterministic token,
and a backoff after runs that fail.

Before a new claim, the previous claim's run is settled: GetJobRun says whether it is still active (QUEUED,
PENDING, SCHEDULED, SUBMITTED, RUNNING, CANCELLING: skip, whatever the claim's expiry; QUEUED is reported as
`run-queued`: the application's MaxConcurrentRuns is taken, infra/capacity.py), or how it ended. It
succeeded if EMR says SUCCESS, the lease epoch moved past the claim's (the run took the lease) and some offset
of the connector was committed since the claim; SUCCESS with a commit-less lease is `idle`; FAILED, CANCELLED,
a vanished run, or a claim that expired with no run are `failed` (a run serving several connectors ends FAILED when
one of them failed: a connector of it that took the lease and committed since its claim succeeded). After n
consecutive failed or idle runs, the next one waits min(base * 2^(n-1), cap) from when the trigger saw the last one
end; a success resets n. A claim without a run id that has not expired is resumed with the same client token:
StartJobRun with the token of (connector, attempt), or of a batched run's connectors and attempts, returns the run
already started instead of a second one. `prepare` claims; lambdas/trigger/batches.py puts the claimed connectors
in job runs and starts them.

Table upkeep (`start_maintenance`, IcebergFormat) takes neither lease nor claim: `sink-engine iceberg maintain`
commits safely while the connector's runs commit (docs/iceberg.md, Upkeep), and a second one at once only
finds less to do. Its token derives from (connector, the schedule's event time), so a tick delivered twice, or an
invocation retried, starts one run. A doctor run (`start_doctor`: `sink-engine doctor`, which writes only its
probes) takes neither either; its token derives from (connector, the request's time). Nor does a restore
(`start_restore`: `sink-engine restore`, which takes a lease of its own, keyed by its target topic, and resumes
where an earlier attempt stopped); its token derives from (connector, the request, the request's time), and a
rerun's from that and its attempt (restore_runs.py: the tick starts a restore again that ended with progress).

Each run's workers are sized (sizing.py): a data run's to the offsets pending when its connectors are put in it
(their claims keep the sizes, so a resumed StartJobRun sends the same request), table upkeep's, the doctor's and a
restore's (its driver reads the objects and produces, with no executor work) to a small fixed plan; their `--conf`s
follow the infrastructure's spark parameters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from lambdas.trigger.connectors import Connector
from lambdas.trigger.pending import Pending
from lambdas.trigger.restore import RestoreRequest
from lambdas.trigger.sizing import UPKEEP, Capacity, plan_run, run_shape
from lambdas.trigger.state import FAILED, IDLE, RESTARTED, SUCCEEDED, RunClaim, TriggerState

if TYPE_CHECKING:
    from sink_engine.aws_types import EMRServerlessClient

TERMINAL_STATES = {"SUCCESS", "FAILED", "CANCELLED"}  # any other state (QUEUED ... CANCELLING) is active
# a run waiting for a slot of the application's MaxConcurrentRuns ("Job run states", EMR Serverless User Guide)
QUEUED = "QUEUED"
QUEUED_METRIC = "QueuedJobRuns"  # the trigger's count of runs it saw QUEUED, every connector's (an alarm's metric)
# the states CancelJobRun acts on (the active ones less CANCELLING)
CANCELLABLE = ["SUBMITTED", "PENDING", "SCHEDULED", "RUNNING", "QUEUED"]


@dataclass(frozen=True)
class JobSpec:
    """How to start the sink job on EMR Serverless (the role comes with each connector); `capacity` is the
    application's maximum, which no run's workers exceed; `max_executors` the executors a data run may have (None:
    no limit)."""

    application_id: str
    entry_point: str
    spark_parameters: str
    timeout_minutes: int
    capacity: Capacity
    max_executors: int | None = None

    def start_request(
        self, connector: Connector, arguments: list[str], token: str, name: str, tags: dict[str, str], sizes: str = ""
    ) -> dict:
        """The StartJobRun request of a run of the job's entry point with `arguments`, as `connector`'s role, on
        the workers `sizes` names (a Plan's `spark_parameters()`; empty: EMR's default sizes)."""
        return self.request(connector.role_arn, arguments, token, name, {"connector": connector.name, **tags}, sizes)

    def request(
        self, role_arn: str, arguments: list[str], token: str, name: str, tags: dict[str, str], sizes: str = ""
    ) -> dict:
        """The StartJobRun request of a run of the job's entry point with `arguments`, as the role `role_arn`."""
        parameters = f"{self.spark_parameters} {sizes}" if sizes else self.spark_parameters
        return {
            "applicationId": self.application_id,
            "clientToken": token,
            "executionRoleArn": role_arn,
            "name": name,
            "executionTimeoutMinutes": self.timeout_minutes,
            "jobDriver": {
                "sparkSubmit": {
                    "entryPoint": self.entry_point,
                    "entryPointArguments": arguments,
                    "sparkSubmitParameters": parameters,
                }
            },
            "tags": tags,
        }

    def streaming_request(self, connector: Connector, token: str, name: str, tags: dict[str, str], sizes: str) -> dict:
        """The StartJobRun request of `connector`'s continuous job (lambdas/trigger/continuous.py): `sink-engine run
        --continuous` as an EMR Serverless STREAMING job run (`mode`, release 7.1.0 or later; StartJobRun, EMR
        Serverless API Reference, https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_StartJobRun.html),
        retried by EMR after a failed attempt at most `max_failed_attempts_per_hour` times an hour (`retryPolicy`:
        "Job resiliency", EMR Serverless User Guide,
        https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/SECTION-jobs-resiliency.xml.html), and never
        timed out (`executionTimeoutMinutes` 0: "Other considerations", EMR Serverless User Guide,
        https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/considerations.html)."""
        continuous = connector.continuous
        assert continuous is not None  # only a continuous connector's job runs continuously
        request = self.start_request(
            connector, ["run", "--continuous", "--config", connector.config_uri], token, name, tags, sizes
        )
        return {
            **request,
            "mode": "STREAMING",
            "retryPolicy": {"maxFailedAttemptsPerHour": continuous.max_failed_attempts_per_hour},
            "executionTimeoutMinutes": 0,
        }

    def sizes(self, members: Sequence[tuple[Connector, Pending | None]]) -> str:
        """The `--conf`s of the workers of a run of `members`' connectors, each finding its `pending` (None: nothing
        known): one, or every connector of a batched run (sizing.run_shape)."""
        shape = run_shape(c.shape for c, _ in members)
        behind = [b for _, pending in members if pending for b in pending.behind]
        tables = any(c.tables for c, _ in members)
        return plan_run(shape, behind, self.capacity, tables, self.max_executors).spark_parameters()


@dataclass(frozen=True)
class Ready:
    """A connector whose run is claimed and may start: its claim (attempt; once put in a job run, that run's token
    and configs), `started` or `resumed`, why, and what the run will find (`pending`, which sizes its workers)."""

    connector: Connector
    claim: RunClaim
    action: str
    reason: str
    pending: Pending | None


@dataclass(frozen=True)
class Backoff:
    base_ms: int
    cap_ms: int

    def delay_ms(self, failures: int) -> int:
        """min(base * 2^(failures-1), cap); 0 without failures."""
        return 0 if failures <= 0 else min(self.base_ms << min(failures - 1, 40), self.cap_ms)


@dataclass(frozen=True)
class Outcome:
    action: str  # started | resumed | skipped
    reason: str
    job_run_id: str | None = None
    retry_at_ms: int | None = None


def client_token(connector: str, attempt: int) -> str:
    return hashlib.sha256(f"{connector}#{attempt}".encode()).hexdigest()[:64]


def maintenance_token(connector: str, scheduled_at: str) -> str:
    return hashlib.sha256(f"{connector}#maintain#{scheduled_at}".encode()).hexdigest()[:64]


def maintenance_arguments(config_uri: str) -> list[str]:
    """The engine CLI's arguments of a connector's table upkeep."""
    return ["iceberg", "maintain", "--config", config_uri]


def doctor_token(connector: str, requested_at: str) -> str:
    return hashlib.sha256(f"{connector}#doctor#{requested_at}".encode()).hexdigest()[:64]


def doctor_arguments(config_uri: str) -> list[str]:
    """The engine CLI's arguments of a connector's doctor run."""
    return ["doctor", "--config", config_uri]


class RunStarter:
    def __init__(
        self, state: TriggerState, emr: EMRServerlessClient, job: JobSpec, claim_ms: int, backoff: Backoff
    ) -> None:
        self._state, self._emr, self._job, self._claim_ms, self._backoff = state, emr, job, claim_ms, backoff
        self._states: dict[str, str] = {}  # job run id -> its state, seen in this invocation (`begin`)

    def begin(self) -> None:
        """Forget the job runs' states seen so far: an invocation asks EMR again, once per run (a run serving many
        connectors is asked about once, not once per connector)."""
        self._states.clear()

    def prepare(
        self,
        connector: Connector,
        reason: str,
        now_ms: int,
        last_commit_ms: int,
        forced: bool = False,
        pending: Pending | None = None,
    ) -> Outcome | Ready:
        """The connector's claimed run, ready to start (lambdas/trigger/batches.py starts it, alone or with others),
        or why none starts: a run holds the lease or its claim's run is active, or (unless `forced`) the backoff
        after failed runs has not elapsed. `last_commit_ms`: the newest committed_at_ms of the connector's offsets;
        `pending`: what the run will find, which sizes its workers. Safe to call again with the same arguments."""
        name = connector.name
        lease = self._state.lease(name)
        if lease and lease.held(now_ms):
            return Outcome("skipped", "lease-held")
        epoch = lease.epoch if lease else 0
        claim = self._state.claim(name)
        if claim and claim.outcome is None:
            verdict = self.verdict(claim, epoch, now_ms, last_commit_ms)
            if verdict in ("active", QUEUED):
                return Outcome("skipped", "run-queued" if verdict == QUEUED else "run-active", claim.job_run_id)
            if verdict == "resume":
                return Ready(connector, claim, "resumed", reason, pending)
            claim = self._state.settle(name, claim, verdict, now_ms)
            if claim is None:
                return Outcome("skipped", "claimed-concurrently")
        # sized once the run is composed (batches.py): its workers serve every connector it runs
        fresh = self.claim_next(name, claim, claim.failures if claim else 0, epoch, now_ms, forced, None)
        if isinstance(fresh, Outcome):
            return fresh
        return Ready(connector, fresh, "started", reason, pending)

    def claim_next(
        self,
        name: str,
        claim: RunClaim | None,
        failures: int,
        epoch: int,
        now_ms: int,
        forced: bool,
        sizes: str | None,
        fingerprint: str | None = None,
    ) -> RunClaim | Outcome:
        """The claim of `name`'s next run (attempt after `claim`'s, put conditionally), or why there is none: the
        backoff after `failures` failed runs in a row has not elapsed (unless `forced`), or another invocation
        claimed first."""
        if failures and not forced:
            assert claim is not None and claim.settled_at_ms is not None  # failures count settled claims
            retry_at = claim.settled_at_ms + self._backoff.delay_ms(failures)
            if now_ms < retry_at:
                return Outcome("skipped", "backoff", claim.job_run_id, retry_at)
        fresh = RunClaim(
            (claim.attempt if claim else 0) + 1,
            epoch,
            now_ms,
            now_ms + self._claim_ms,
            failures_before=failures,
            sizes=sizes,
            fingerprint=fingerprint,
        )
        if not self._state.put_claim(name, fresh, claim.attempt if claim else None):
            return Outcome("skipped", "claimed-concurrently")
        return fresh

    def verdict(self, claim: RunClaim, epoch: int, now_ms: int, last_commit_ms: int) -> str:
        """active | QUEUED | resume | succeeded | idle | failed | restarted, for a claim not settled yet (restarted:
        a run the trigger cancelled itself, once it ended)."""
        took_lease = epoch > claim.lease_epoch
        if claim.job_run_id is None:
            if took_lease:  # StartJobRun answered but its id was not recorded, and the run went on
                return SUCCEEDED if last_commit_ms >= claim.claimed_at_ms else IDLE
            return "resume" if claim.expires_at_ms > now_ms else FAILED
        state = self.job_state(claim.job_run_id)
        if state not in TERMINAL_STATES:
            return QUEUED if state == QUEUED else "active"
        if claim.cancelled_at_ms is not None:
            return RESTARTED
        if not took_lease:
            return FAILED
        # a run of several connectors ends FAILED when one of them failed: one that committed since succeeded
        if state != "SUCCESS" and not (len(claim.configs) > 1 and last_commit_ms >= claim.claimed_at_ms):
            return FAILED
        return SUCCEEDED if last_commit_ms >= claim.claimed_at_ms else IDLE

    def start_maintenance(self, connector: Connector, scheduled_at: str) -> Outcome:
        """Start `sink-engine iceberg maintain` for `connector` (see the module docstring); `scheduled_at` names the
        tick. A refused StartJobRun raises (the invocation is retried, with the same token)."""
        answer = self._emr.start_job_run(
            **self._job.start_request(
                connector,
                maintenance_arguments(connector.config_uri),
                maintenance_token(connector.name, scheduled_at),
                f"{connector.name}-maintain",
                {"action": "maintain"},
                UPKEEP.spark_parameters(),
            )
        )
        return Outcome("started", "maintenance", answer["jobRunId"])

    def start_doctor(self, connector: Connector, requested_at: str) -> Outcome:
        """Start `sink-engine doctor` for `connector` as its job role (see the module docstring); `requested_at`
        names the request. A refused StartJobRun raises."""
        answer = self._emr.start_job_run(
            **self._job.start_request(
                connector,
                doctor_arguments(connector.config_uri),
                doctor_token(connector.name, requested_at),
                f"{connector.name}-doctor",
                {"action": "doctor"},
                UPKEEP.spark_parameters(),
            )
        )
        return Outcome("started", "doctor", answer["jobRunId"])

    def start_restore(self, connector: Connector, request: RestoreRequest, token: str) -> Outcome:
        """Start `sink-engine restore` of `request` for `connector` as its job role (see the module docstring);
        `token` is the client token (`RestoreRequest.token`, or a rerun's: restore_runs.py). A refused StartJobRun
        raises."""
        answer = self._emr.start_job_run(
            **self._job.start_request(
                connector,
                request.arguments(connector.config_uri),
                token,
                f"{connector.name}-restore",
                {"action": "restore", "target_topic": request.target_topic},
                UPKEEP.spark_parameters(),
            )
        )
        return Outcome("started", "restore", answer["jobRunId"])

    def submit_streaming(self, connector: Connector, claim: RunClaim, action: str, reason: str) -> Outcome:
        """StartJobRun of `connector`'s continuous job for `claim` (attempt, sizes); as `_submit`, a refused start
        keeps the claim for the next call to resume."""
        continuous = connector.continuous
        assert continuous is not None and claim.sizes is not None  # a continuous claim is sized when made
        tags = {
            "attempt": str(claim.attempt),
            "mode": "continuous",
            "shutdown_grace_seconds": str(continuous.shutdown_grace_seconds),
        }
        try:
            answer = self._emr.start_job_run(
                **self._job.streaming_request(
                    connector,
                    client_token(connector.name, claim.attempt),
                    f"{connector.name}-continuous-{claim.attempt}",
                    tags,
                    claim.sizes,
                )
            )
        except ClientError as e:
            return Outcome("skipped", f"start-failed: {e.response['Error']['Code']}")
        self._state.record_job_run(connector.name, claim.attempt, answer["jobRunId"])
        return Outcome(action, reason, answer["jobRunId"])

    def cancel(self, job_run_id: str, grace_seconds: int) -> bool:
        """CancelJobRun with a grace period: EMR Serverless asks the job to stop and ends it `grace_seconds` later
        (release 7.9.0 and later: "EMR Serverless job run cancellation with grace period", EMR Serverless User Guide,
        https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/job-cancellation-grace-period.html). False when
        the run had ended meanwhile (ValidationException)."""
        try:
            self._emr.cancel_job_run(
                applicationId=self._job.application_id, jobRunId=job_run_id, shutdownGracePeriodInSeconds=grace_seconds
            )
        except ClientError as e:
            if e.response["Error"]["Code"] == "ValidationException":
                return False
            raise
        return True

    def streaming_runs(self) -> list[dict]:
        """The application's STREAMING job runs that CancelJobRun acts on, each as GetJobRun describes it (its tags
        name the connector and the attempt: StartJobRun's)."""
        runs: list[dict] = []
        try:
            for page in self._emr.get_paginator("list_job_runs").paginate(
                applicationId=self._job.application_id, mode="STREAMING", states=CANCELLABLE
            ):
                runs += page["jobRuns"]
        except ClientError as e:
            if e.response["Error"]["Code"] != "ResourceNotFoundException":  # moto: an application that never ran
                raise
        described = [
            self._emr.get_job_run(applicationId=self._job.application_id, jobRunId=r["id"])["jobRun"] for r in runs
        ]
        return [d for d in described if (d.get("tags") or {}).get("mode") == "continuous"]

    def job_state(self, job_run_id: str) -> str:
        """EMR Serverless' state of the run (FAILED for a run that no longer exists), asked once per `begin`."""
        if job_run_id not in self._states:
            self._states[job_run_id] = self._ask_state(job_run_id)
        return self._states[job_run_id]

    def _ask_state(self, job_run_id: str) -> str:
        try:
            run = self._emr.get_job_run(applicationId=self._job.application_id, jobRunId=job_run_id)
        except ClientError as e:
            if e.response["Error"]["Code"] == "ResourceNotFoundException":
                return "FAILED"  # the run is gone (application recreated): nothing of it can still start
            raise
        return run["jobRun"]["state"]
