"""Whether EMR Serverless' job timeout leaves every connector's run the time to save its work, checked at synth.

Each StartJobRun carries `executionTimeoutMinutes` (`emr.job_timeout_minutes`): past it EMR Serverless cancels the
run ("Running jobs from the AWS CLI", EMR Serverless User Guide,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/jobs-cli.html: "If the job run exceeds this
duration, EMR Serverless will automatically cancel it"; "Job run states",
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/job-states.html: CANCELLING when "the job run has
timed out"), counting the run's start-up too. The engine's own bound, `sink.run.timeout.ms`, counts from the
driver's start of the run; past it each range stops and the run commits what its closed files hold
(docs/reference/configuration.md). A job timeout that is not above it cancels the run before it commits: nothing is
saved and the next run is the same size, so it never gets through. Hence the job timeout must exceed every connector's
run timeout by MARGIN_MINUTES (an assumption, not measured on EMR: the workers' and Spark's start-up, 30 s to a few
minutes; the watchdog's grace, at most 60 s; the last uploads and commits), and a connector without a run timeout (0) is
refused.

A continuous connector (`continuous.connectors.<name>`) is not checked: its runs are STREAMING job runs with
`executionTimeoutMinutes` 0, which never time out ("Other considerations", EMR Serverless User Guide,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/considerations.html: "You can set
executionTimeoutMinutes to 0 if you want your job run to never time out ... a streaming application"), and a
continuous run has no run timeout of its own.
"""

from __future__ import annotations

import math

from infra.connectors import ConnectorSpec
from infra.errors import ConnectorSpecError
from infra.settings import Settings
from sink_engine.run.settings import RunSettings

MARGIN_MINUTES = 10
KEY = "sink.run.timeout.ms"


def check_job_timeout(settings: Settings, connectors: tuple[ConnectorSpec, ...]) -> None:
    """ConnectorSpecError naming the connector file and `sink.run.timeout.ms` that does not fit in
    `emr.job_timeout_minutes` with MARGIN_MINUTES to spare."""
    job_minutes = settings.emr.job_timeout_minutes
    for spec in connectors:
        if spec.continuous is not None:
            continue
        run_ms = RunSettings.from_config(spec.config).timeout_ms
        if run_ms == 0:
            raise ConnectorSpecError(
                spec.source,
                KEY,
                (
                    f"0 (no bound) lets a run go on until EMR Serverless cancels it at emr.job_timeout_minutes="
                    f"{job_minutes}, before it commits: set it to at most {job_minutes - MARGIN_MINUTES} minutes "
                    f"({(job_minutes - MARGIN_MINUTES) * 60_000} ms)"
                ),
            )
        if math.ceil(run_ms / 60_000) + MARGIN_MINUTES > job_minutes:
            raise ConnectorSpecError(
                spec.source,
                KEY,
                (
                    f"{run_ms} ms ({run_ms / 60_000:g} min) and {MARGIN_MINUTES} min of start-up and commits do not fit "
                    f"in emr.job_timeout_minutes={job_minutes}: EMR Serverless would cancel the run before it commits "
                    f"and the next run would be as big; lower it, or raise emr.job_timeout_minutes to at least "
                    f"{math.ceil(run_ms / 60_000) + MARGIN_MINUTES}"
                ),
            )
