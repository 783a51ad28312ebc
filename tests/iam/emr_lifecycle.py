"""An IAM-enforcing moto server whose EMR Serverless follows AWS's life cycle where the application stop depends on
it (moto 5.2.5 has none: docs/aws-fidelity.md). Run as `python -m tests.iam.emr_lifecycle <moto_server args>`;
`lifecycle_moto()` starts one on a free port, enforcing IAM after the admin's free requests.

What changes, as the EMR Serverless API Reference and User Guide describe it:
- CreateApplication leaves the application CREATED (moto: STARTED); StartJobRun on a CREATED or STOPPED application
  starts it (auto-start): STARTING, then STARTED.
- A job run is SUBMITTED and moves through PENDING and SCHEDULED to RUNNING, where it stays until cancelled
  ("Job run states"; moto: SUCCESS at once).
- CancelJobRun on an active run makes it CANCELLING, then CANCELLED (moto: CANCELLED at once, whatever its state);
  on a run that is over it answers ValidationException (the answer the function expects; AWS's exact answer for
  that case is not documented).
- StopApplication needs the application STARTING or STARTED and "All scheduled and running jobs must be completed or
  cancelled" (API Reference, StopApplication): else ValidationException (moto: stops in any state); then STOPPING,
  then STOPPED ("Application states").
- ListJobRuns of an application that never ran a job answers no runs (moto: ResourceNotFound).

- StartJobRun keeps `mode`, `retryPolicy` and `executionTimeoutMinutes` as sent (moto drops the first two and turns
  a timeout of 0, never, into 720), and CancelJobRun its `shutdownGracePeriodInSeconds` (moto drops it), on the run
  (`mode`, `retry_policy`, `requested_timeout_minutes`, `shutdown_grace_period_in_seconds`: read through moto's state
  API); ListJobRuns filters on `mode` as AWS does (moto ignores it), and without `mode` lists BATCH runs only (the
  API Reference does not say what a listing without it returns; issue 34 reports STREAMING runs left out, and the
  narrower answer is the one a caller must not depend on: docs/aws-fidelity.md).

Time is counted in looks, so that a test is deterministic: each GetApplication or ListApplications moves every
application one step along its way, each GetJobRun or ListJobRuns every run, before the answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ACTIVE = {"SUBMITTED", "PENDING", "SCHEDULED", "RUNNING", "QUEUED"}  # runs CancelJobRun cancels
NOT_OVER = ACTIVE | {"CANCELLING"}  # runs that keep StopApplication refused
ROOT = Path(__file__).resolve().parents[2]
_REQUEST = threading.local()  # what the response layer read of the request and moto's backend is not given


def _ahead(model, *states: str) -> None:
    """`model` is in states[0] now and in each following state at the next looks."""
    model.state = states[0]
    model.ahead = list(states[1:])


def _step(models) -> None:
    for model in models:
        if getattr(model, "ahead", None):
            model.state = model.ahead.pop(0)


def patch() -> None:
    """Give moto's EMR Serverless backend and responses the life cycle of the module docstring."""
    from moto.emrserverless.exceptions import ValidationException
    from moto.emrserverless.models import EMRServerlessBackend
    from moto.emrserverless.responses import EMRServerlessResponse

    backend_class, responses = EMRServerlessBackend, EMRServerlessResponse
    create, start, cancel, listing = (
        backend_class.create_application,
        backend_class.start_job_run,
        backend_class.cancel_job_run,
        backend_class.list_job_runs,
    )

    def create_application(self, *args, **kwargs):
        application = create(self, *args, **kwargs)
        _ahead(application, "CREATED")
        return application

    def start_job_run(self, application_id, *args, **kwargs):
        run = start(self, application_id, *args, **kwargs)
        run.mode = getattr(_REQUEST, "mode", None) or "BATCH"
        run.retry_policy = getattr(_REQUEST, "retry_policy", None)
        timeout = getattr(_REQUEST, "timeout", None)
        run.requested_timeout_minutes = None if timeout is None else int(timeout)
        application = self.applications[application_id]
        if application.state in ("CREATED", "STOPPED"):
            _ahead(application, "STARTING", "STARTED")
        _ahead(run, "SUBMITTED", "PENDING", "SCHEDULED", "RUNNING")
        return run

    def cancel_job_run(self, application_id, job_run_id):
        run = self.get_job_run(application_id, job_run_id)
        if run.state not in ACTIVE:
            raise ValidationException(f"Job run {job_run_id} is {run.state}: it cannot be cancelled")
        result = cancel(self, application_id, job_run_id)
        grace = getattr(_REQUEST, "grace", None)
        run.shutdown_grace_period_in_seconds = None if grace is None else int(grace)
        _ahead(run, "CANCELLING", "CANCELLING", "CANCELLED")
        return result

    def stop_application(self, application_id):
        application = self.get_application(application_id)
        if application.state not in ("STARTING", "STARTED"):
            raise ValidationException(f"Application {application_id} is {application.state}: it cannot be stopped")
        if any(r.state in NOT_OVER for r in self.job_runs.get(application_id, [])):
            raise ValidationException(
                f"Application {application_id} has job runs in progress: all scheduled and "
                "running jobs must be completed or cancelled before stopping it"
            )
        _ahead(application, "STOPPING", "STOPPING", "STOPPED")

    def list_job_runs(self, application_id, *args, **kwargs):
        self.get_application(application_id)  # ResourceNotFound for an unknown application only
        runs = listing(self, application_id, *args, **kwargs) if application_id in self.job_runs else []
        mode = getattr(_REQUEST, "mode", None) or "BATCH"
        return [r for r in runs if getattr(r, "mode", "BATCH") == mode]

    def reading(answer, **wanted: str):
        """The response `answer` with the request's parameters `wanted` (thread-local name -> parameter name) put
        aside first, for the backend that moto does not give them to."""

        def respond(self):
            for local, parameter in wanted.items():
                setattr(_REQUEST, local, self._get_param(parameter))
            return answer(self)

        return respond

    def looking_at(kind: str, answer):
        def look(self):
            backend = self.emrserverless_backend
            _step(
                backend.applications.values()
                if kind == "applications"
                else [r for runs in backend.job_runs.values() for r in runs]
            )
            return answer(self)

        return look

    backend_class.create_application = create_application
    backend_class.start_job_run = start_job_run
    backend_class.cancel_job_run = cancel_job_run
    backend_class.stop_application = stop_application
    backend_class.list_job_runs = list_job_runs
    responses.start_job_run = reading(
        responses.start_job_run, mode="mode", retry_policy="retryPolicy", timeout="executionTimeoutMinutes"
    )
    responses.cancel_job_run = reading(responses.cancel_job_run, grace="shutdownGracePeriodInSeconds")
    for name, kind in [
        ("get_application", "applications"),
        ("list_applications", "applications"),
        ("get_job_run", "runs"),
        ("list_job_runs", "runs"),
    ]:
        answer = getattr(responses, name)
        if name == "list_job_runs":
            answer = reading(answer, mode="mode")
        setattr(responses, name, looking_at(kind, answer))


@contextmanager
def lifecycle_moto(free_requests: int) -> Iterator[str]:
    """A moto server with `patch()` applied, enforcing IAM after `free_requests` requests: yields its endpoint."""
    from devtools.processes import LOOPBACK, die_with_parent, free_port, wait_for_port

    port = free_port()
    env = {
        **os.environ,
        "INITIAL_NO_AUTH_ACTION_COUNT": str(free_requests),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.iam.emr_lifecycle", "-H", LOOPBACK, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=die_with_parent,
        env=env,
    )
    try:
        wait_for_port(port, process, "moto server (EMR Serverless life cycle)")
        yield f"http://{LOOPBACK}:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


if __name__ == "__main__":
    from moto.server import main

    from devtools import moto_server

    moto_server.patch()  # the suite's moto: one table copy per transaction, a state API that does not fail
    patch()
    main()
