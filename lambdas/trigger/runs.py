"""Start at most one job run per connector: the engine's lease, the trigger's run claim, a deterministic token.

A claim is live while it has not expired and the lease epoch has not moved since it was written (the run it
asked for has not taken the lease yet). The EMR client token derives from (connector, attempt), so a retried
StartJobRun for the same claim returns the run already started instead of a second one.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from lambdas.trigger.state import RunClaim, TriggerState

ACTIVE_STATES = {"SUBMITTED", "PENDING", "SCHEDULED", "RUNNING", "QUEUED"}


@dataclass(frozen=True)
class JobSpec:
    """How to start the sink job on EMR Serverless."""

    application_id: str
    role_arn: str
    entry_point: str
    spark_parameters: str
    timeout_minutes: int


@dataclass(frozen=True)
class Outcome:
    connector: str
    action: str  # started | resumed | skipped
    reason: str
    job_run_id: str | None = None


def client_token(connector: str, attempt: int) -> str:
    return hashlib.sha256(f"{connector}#{attempt}".encode()).hexdigest()[:64]


class RunStarter:
    def __init__(self, state: TriggerState, emr, job: JobSpec, claim_ms: int):
        self._state, self._emr, self._job, self._claim_ms = state, emr, job, claim_ms

    def start(self, connector: str, config_uri: str, reason: str, now_ms: int) -> Outcome:
        """Start a run for `connector` unless one holds the lease or a live claim; safe to call again."""
        lease = self._state.lease(connector)
        if lease and lease.held(now_ms):
            return Outcome(connector, "skipped", "lease-held")
        epoch = lease.epoch if lease else 0
        claim = self._state.claim(connector)
        if claim and claim.expires_at_ms > now_ms and claim.lease_epoch == epoch:
            if claim.job_run_id is None:
                return self._submit(connector, config_uri, claim, "resumed", reason)
            if self._job_state(claim.job_run_id) in ACTIVE_STATES:
                return Outcome(connector, "skipped", "run-starting", claim.job_run_id)
        fresh = RunClaim((claim.attempt if claim else 0) + 1, epoch, now_ms + self._claim_ms, None)
        if not self._state.put_claim(connector, fresh, claim.attempt if claim else None):
            return Outcome(connector, "skipped", "claimed-concurrently")
        return self._submit(connector, config_uri, fresh, "started", reason)

    def _submit(self, connector: str, config_uri: str, claim: RunClaim, action: str, reason: str) -> Outcome:
        answer = self._emr.start_job_run(
            applicationId=self._job.application_id,
            clientToken=client_token(connector, claim.attempt),
            executionRoleArn=self._job.role_arn,
            name=f"{connector}-{claim.attempt}",
            executionTimeoutMinutes=self._job.timeout_minutes,
            jobDriver={"sparkSubmit": {
                "entryPoint": self._job.entry_point,
                "entryPointArguments": ["run", "--config", config_uri],
                "sparkSubmitParameters": self._job.spark_parameters,
            }},
            tags={"connector": connector, "attempt": str(claim.attempt)},
        )
        self._state.record_job_run(connector, claim.attempt, answer["jobRunId"])
        return Outcome(connector, action, reason, answer["jobRunId"])

    def _job_state(self, job_run_id: str) -> str:
        run = self._emr.get_job_run(applicationId=self._job.application_id, jobRunId=job_run_id)
        return run["jobRun"]["state"]
