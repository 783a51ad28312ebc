"""`sink-engine run --continuous`: one Spark application whose long-lived tasks serve every connector given
(continuous/driver.py), until SIGTERM or SIGINT, or its driver JVM's shutdown (EMR Serverless' CancelJobRun with a grace
period: run/stopping.py), or until every connector has ended.

Every config is loaded and checked first: one that fails to load is that connector's failure (named by its file); one a
continuous run cannot write stops the command (exit 2) before anything is leased. Then each connector is checked as a
run of it alone would be (run/preflight.py), waiting for a held lease up to 1.5 leases (EMR retries a failed streaming
attempt at once: the lease of the attempt that failed is still held), or for as long as it is held with
`--wait-for-lease`. Of one connector, a failure is the run's: its error and exit code. Of several, one connector's
failure stops that connector alone (CONNECTOR_FAILED, and `[connector] stopped: <cause>` on standard output) while the
others go on; when the run ends, each failed connector's error is on standard error and the last line counts the
outcomes. The exit code is then 0 when no connector failed, else the failed connectors' exit code when they share one
(3: a lease held; 4: a lease lost), else 1; the run ends by itself (without SIGTERM) only when every connector has
ended.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws import dynamodb_client
from sink_engine.aws_types import DynamoDBClient
from sink_engine.cli_run import Ended, preflight_of, report_many, said_by, say, unloaded_outcomes, where_tasks_ran
from sink_engine.config import SinkConfig
from sink_engine.continuous.driver import ContinuousOutcome, ContinuousSummary, check_continuous, run_connectors
from sink_engine.errors import SinkError
from sink_engine.run.spark_runner import spark_session
from sink_engine.run.stopping import JvmShutdownStop, stop_on_signals


def run_continuous_command(configs: list[SinkConfig], wait_for_lease: bool, unloaded: Mapping[str, Exception]) -> int:
    """`run --continuous` of the loaded configs; `unloaded`: each file that failed to load, with its error (see the
    module docstring)."""
    one = len(configs) == 1 and not unloaded
    leases_s = {c.name: check_continuous(c).run.lease_ms / 1000 for c in configs}
    say_for: Callable[[str], Callable[[str], None]] = (lambda _: say) if one else said_by
    outcomes: dict[str, Ended] = unloaded_outcomes(unloaded)
    ready = []
    for config in configs:
        try:
            preflight_of(config, math.inf if wait_for_lease else 1.5 * leases_s[config.name], say_for(config.name))
            ready.append(config)
        except (SinkError, ClientError, BotoCoreError) as e:
            if one:
                raise
            outcomes[config.name] = ContinuousOutcome(config.name, error=e)
    checked = "offsets table, bucket, Kafka and lease checked"
    say(
        f"{checked}; starting Spark"
        if one
        else f"{len(ready)} of {len(configs) + len(unloaded)} connectors: {checked}; starting Spark"
    )
    label = configs[0].name if one else f"{len(configs) + len(unloaded)} connectors"
    if ready:
        with stop_on_signals(label) as stop:
            spark = spark_session(f"sink-engine-{label.replace(' ', '-')}")
            with JvmShutdownStop(spark, label, stop, max(leases_s.values())):
                for outcome in run_connectors(ready, spark, _dynamodb_of, stop, say_for=say_for):
                    outcomes[outcome.connector] = outcome
                    if outcome.summary is not None:
                        _print_continuous(outcome.summary, "" if one else f"[{outcome.connector}] ")
    if one:
        error = outcomes[configs[0].name].error
        if error is not None:
            raise error
        return 0
    return report_many([*unloaded, *(c.name for c in configs)], outcomes)


def _dynamodb_of(config: SinkConfig) -> DynamoDBClient:
    return dynamodb_client(check_continuous(config).run.region)


def _print_continuous(summary: ContinuousSummary, prefix: str) -> None:
    lines = [
        f"{report.tp}: committed {report.committed}, {report.records_written} records in {report.files} files"
        for report in sorted(summary.reports, key=lambda r: (r.tp.topic, r.tp.partition))
    ]
    lines.append(
        f"continuous run stopped after {summary.seconds:.1f}s: {summary.files} files, {summary.records_written} "
        f"records{where_tasks_ran(summary.executors)}"
    )
    print("\n".join(prefix + line for line in lines), flush=True)
