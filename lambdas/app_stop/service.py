"""Bring an EMR Serverless application to a state UpdateApplication and DeleteApplication accept, for the
deployment that updates it and the deletion that removes it.

UpdateApplication needs the application CREATED or STOPPED (EMR Serverless API Reference, UpdateApplication: "An
application has to be in a stopped or created state in order to be updated"); CloudFormation's handler for
AWS::EMRServerless::Application sends the update whatever changed, so a STARTED application fails it ("Only
MaxConcurrentRuns from SchedulerConfiguration can be updated when application is in STARTED state":
aws/aws-cdk#35488, aws-cloudformation/cloudformation-coverage-roadmap#2370). DeleteApplication needs the same
states ("An application has to be in a stopped or created state in order to be deleted", EMR Serverless API
Reference, DeleteApplication,
https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_DeleteApplication.html), so a stack deleted while
its application is STARTED (after any run, until its idle stop) ends DELETE_FAILED. StopApplication needs the
application STARTING or STARTED and every job run of it ended or cancelled (its STOPPING state: "All jobs have
completed and the application is releasing its capacity", EMR Serverless User Guide, "Application states").

So: cancel its active runs (CancelJobRun; a cancelled run commits nothing past what it committed, and the next
run redoes the rest: exactly-once holds), wait for them to end, StopApplication, wait for STOPPED. Auto-start
(autoStartConfiguration) starts it again at the next StartJobRun after the update. A run the trigger starts
while this waits is cancelled in turn.

A STREAMING run (a continuous connector's job, lambdas/trigger/continuous.py) is cancelled with a grace period
(`streaming_grace_seconds`: CancelJobRun `shutdownGracePeriodInSeconds`, "EMR Serverless job run cancellation with
grace period", EMR Serverless User Guide,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/job-cancellation-grace-period.html), in which the job
commits what it closed and releases its lease; the trigger starts it again once the application is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from sink_engine.aws_types import EMRServerlessClient

# states a job run is not over in (EMR Serverless API Reference, JobRun.state), and those CancelJobRun acts on
ACTIVE_RUN_STATES = ["SUBMITTED", "PENDING", "SCHEDULED", "RUNNING", "CANCELLING", "QUEUED"]
# ListJobRuns' `mode` ("The mode of the job runs to list", EMR Serverless API Reference, ListJobRuns): the API
# Reference does not say which runs a listing without it returns, and a review of the deployed stacks (issue 34)
# reports BATCH runs only; each mode is listed by name, so that no active run goes unseen (StopApplication would be
# refused until the deadline while a STREAMING run the function never cancelled kept running).
RUN_MODES = ("BATCH", "STREAMING")
UPDATABLE = {"CREATED", "STOPPED"}
STOPPABLE = {"STARTING", "STARTED"}


class StopTimeout(Exception):
    """The application was not stopped before the deadline (the deployment fails and rolls back)."""


class ApplicationStopper:
    """`emr`: a boto3 emr-serverless client; `clock` and `sleep` in seconds; `poll_seconds` between looks;
    `streaming_grace_seconds`: the grace period a STREAMING run is cancelled with (None: none)."""

    def __init__(
        self,
        emr: EMRServerlessClient,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        poll_seconds: float = 10.0,
        streaming_grace_seconds: int | None = None,
    ) -> None:
        self._emr, self._clock, self._sleep, self._poll = emr, clock, sleep, poll_seconds
        self._grace = streaming_grace_seconds

    def find(self, name: str) -> list[str]:
        """The ids of the applications named `name` that are not in a state UpdateApplication accepts (nor
        TERMINATED): those to stop."""
        ids = []
        for page in self._emr.get_paginator("list_applications").paginate():
            ids += [
                a["id"]
                for a in page["applications"]
                if a["name"] == name and a["state"] not in UPDATABLE | {"TERMINATED"}
            ]
        return ids

    def stop(self, application_id: str, deadline: float) -> list[str]:
        """Cancel the application's active runs and stop it; returns the ids of the runs cancelled. Returns at
        once for an application already CREATED, STOPPED or TERMINATED; StopTimeout past `deadline` (on `clock`)."""
        cancelled: list[str] = []
        while True:
            state = self._emr.get_application(applicationId=application_id)["application"]["state"]
            if state in UPDATABLE or state == "TERMINATED":
                return cancelled
            if state in STOPPABLE:
                active = self._active_runs(application_id)
                for run in active:
                    if run["state"] != "CANCELLING":
                        grace = self._grace if run.get("mode") == "STREAMING" else None
                        self._cancel(application_id, run["id"], grace)
                        cancelled.append(run["id"])
                if not active:
                    self._stop(application_id)
            # CREATING, STOPPING, or runs ending: look again
            if self._clock() + self._poll > deadline:
                raise StopTimeout(
                    f"application {application_id} is {state}, not stopped, at the deadline "
                    f"(cancelled runs: {', '.join(cancelled) or 'none'})"
                )
            self._sleep(self._poll)

    def stop_if_exists(self, application_id: str, deadline: float) -> list[str] | None:
        """`stop`, or None for an application that no longer exists (deleted by hand: nothing to stop)."""
        try:
            return self.stop(application_id, deadline)
        except ClientError as e:
            if e.response["Error"]["Code"] == "ResourceNotFoundException":
                return None
            raise

    def _active_runs(self, application_id: str) -> list[dict]:
        """The application's runs that are not over, of each of RUN_MODES (a run seen in both, once)."""
        runs: dict[str, dict] = {}
        for mode in RUN_MODES:
            for page in self._emr.get_paginator("list_job_runs").paginate(
                applicationId=application_id, states=ACTIVE_RUN_STATES, mode=mode
            ):
                for run in page["jobRuns"]:
                    runs.setdefault(run["id"], {"mode": mode, **run})
        return list(runs.values())

    def _cancel(self, application_id: str, run_id: str, grace_seconds: int | None) -> None:
        graceful = {} if grace_seconds is None else {"shutdownGracePeriodInSeconds": grace_seconds}
        try:
            self._emr.cancel_job_run(applicationId=application_id, jobRunId=run_id, **graceful)
        except ClientError as e:  # the run ended meanwhile: nothing to cancel
            if e.response["Error"]["Code"] != "ValidationException":
                raise

    def _stop(self, application_id: str) -> None:
        try:
            self._emr.stop_application(applicationId=application_id)
        except ClientError as e:  # a run started, or the state moved, since the last look: look again
            if e.response["Error"]["Code"] != "ValidationException":
                raise
