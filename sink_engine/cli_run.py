"""`sink-engine run`: a bounded run of one connector or of several in one Spark application (a continuous run:
cli_continuous.py).

Several connectors (`--config` more than once, `--config-dir`): every config is loaded and checked first (one that fails
is that connector's failure, named by its file, and the others run); then each connector is checked as a run of it alone
would be (run/preflight.py) and run as if alone (driver/job.py: its own lease, plan, Spark job group and commit),
several at once in threads of the driver (driver/many.py). One connector's failure is its own outcome: the others still
commit. The lines a run says are prefixed by `[connector]`; the last line counts the outcomes. The exit code is 0 when
every connector committed, else the failed connectors' exit code when they share one (3: a lease held), else 1."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws import dynamodb_client
from sink_engine.clock import now_ms
from sink_engine.config import SinkConfig
from sink_engine.dlq.counts import add_counts, format_counts
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.driver.job import run_job
from sink_engine.driver.many import Outcome, run_each
from sink_engine.errors import AwsCallError, SinkError
from sink_engine.progress import ProgressBoard
from sink_engine.run.metrics import publisher_from_environment
from sink_engine.run.preflight import preflight
from sink_engine.run.settings import RunSettings
from sink_engine.run.spark_runner import spark_session, tasks_share_driver_process
from sink_engine.run.stopping import JvmShutdownStop, stop_on_signals
from sink_engine.transform.settings import TransformSettings

if TYPE_CHECKING:
    import threading

    from pyspark.sql import SparkSession

    from sink_engine.driver.job import RunSummary


class Ended(Protocol):
    """How a connector of a multi-connector run ended (driver/many.py's Outcome, a continuous run's outcome)."""

    @property
    def connector(self) -> str: ...

    @property
    def error(self) -> Exception | None: ...


PIPE_PROGRESS_S = 10.0  # a bounded run's progress line in a pipe or a log (local Spark)
CONNECTORS_AT_ONCE = 8  # the connectors of a multi-connector run that run at once (driver/many.py)


def run_command(configs: list[SinkConfig], wait_for_lease: bool, unloaded: Mapping[str, Exception]) -> int:
    """A bounded `run` of the loaded configs; `unloaded`: each file that failed to load, with its error (see the
    module docstring)."""
    if len(configs) == 1 and not unloaded:
        return _run(configs[0], wait_for_lease)
    return _run_many(configs, wait_for_lease, unloaded)


def say(line: str) -> None:
    """A line of what a run is doing, on standard output at once (a terminal, a pipe or a log)."""
    print(line, flush=True)


def said_by(connector: str) -> Callable[[str], None]:
    """`say`, each line prefixed by `[connector]`."""
    return lambda line: say(f"[{connector}] {line}")


def preflight_of(config: SinkConfig, wait_for_lease_s: float, say: Callable[[str], None]) -> None:
    """The run's checks that need no Spark (run/preflight.py). Runs before the stop handlers are installed: a
    signal while it waits for a lease ends the process, which holds nothing yet."""

    preflight(config, wait_for_lease_s, say, now_ms)


def _run(config: SinkConfig, wait_for_lease: bool) -> int:
    """One bounded run; SIGTERM, SIGINT or its driver JVM's shutdown cancel it (run/stopping.py)."""

    run = RunSettings.from_config(config)
    metrics = publisher_from_environment(os.environ, run.region)  # SINK_METRICS=cloudwatch: deployed job
    preflight_of(config, math.inf if wait_for_lease else 0, say)
    say("offsets table, bucket, Kafka and lease checked; starting Spark")
    with stop_on_signals(config.name) as stop:
        spark = spark_session(f"sink-engine-{config.name}")
        # the tasks can report through the driver's disk only when they run in its process; a pipe gets the totals
        tty = sys.stdout.isatty()
        board = (
            ProgressBoard(sys.stdout, None if tty else PIPE_PROGRESS_S) if tasks_share_driver_process(spark) else None
        )
        with JvmShutdownStop(spark, config.name, stop, run.lease_ms / 1000):
            summary = run_job(
                config, spark, dynamodb_client(run.region), progress=board, metrics=metrics, say=say, stop=stop
            )
            _print_run(config, run, summary, "")
    return 0


def _run_many(configs: list[SinkConfig], wait_for_lease: bool, unloaded: Mapping[str, Exception]) -> int:
    """A bounded run of each connector in one Spark application (see the module docstring)."""

    outcomes: dict[str, Ended] = unloaded_outcomes(unloaded)
    ready = []
    for config in configs:
        try:
            preflight_of(config, math.inf if wait_for_lease else 0, said_by(config.name))
            ready.append(config)
        except (SinkError, ClientError, BotoCoreError) as e:
            outcomes[config.name] = Outcome(config.name, error=e)
    total = len(configs) + len(unloaded)
    say(f"{len(ready)} of {total} connectors checked (offsets table, bucket, Kafka, lease); starting Spark")
    label = f"{total} connectors"
    if ready:
        with stop_on_signals(label) as stop:
            spark = spark_session(f"sink-engine-{label.replace(' ', '-')}")
            longest_lease_s = max(RunSettings.from_config(c).lease_ms for c in ready) / 1000
            with JvmShutdownStop(spark, label, stop, longest_lease_s):
                run_one = _bounded_run(spark, stop)
                outcomes.update((o.connector, o) for o in run_each(ready, run_one, CONNECTORS_AT_ONCE))
    return report_many([*unloaded, *(c.name for c in configs)], outcomes)


def unloaded_outcomes(unloaded: Mapping[str, Exception]) -> dict[str, Ended]:
    """The outcome of each connector whose file failed to load, named by its file."""
    return {location: Outcome(location, error=error) for location, error in unloaded.items()}


def _bounded_run(spark: SparkSession, stop: threading.Event) -> Callable[[SinkConfig], RunSummary]:
    """A connector's bounded run in the shared Spark application, its lines prefixed by its name."""

    def run_one(config: SinkConfig) -> RunSummary:
        run = RunSettings.from_config(config)
        metrics = publisher_from_environment(os.environ, run.region)
        say = said_by(config.name)
        summary = run_job(config, spark, dynamodb_client(run.region), metrics=metrics, say=say, stop=stop)
        _print_run(config, run, summary, f"[{config.name}] ")
        return summary

    return run_one


def report_many(connectors: list[str], outcomes: Mapping[str, Ended]) -> int:
    """Each failed connector's error on standard error, the outcomes' count last; the exit code (module docstring).
    `connectors`: every connector's name (a file's that failed to load), in order."""
    failed = [outcomes[name] for name in connectors if outcomes[name].error is not None]
    codes = {exit_code(o.error) for o in failed}
    for outcome in failed:
        print(f"error: [{outcome.connector}] {outcome.error}", file=sys.stderr, flush=True)
    names = ", ".join(f"{o.connector} (exit {exit_code(o.error)})" for o in failed)
    print(
        f"connectors: {len(connectors) - len(failed)} committed, {len(failed)} failed" + (f": {names}" if names else "")
    )
    if not failed:
        return 0
    return codes.pop() if len(codes) == 1 else 1


def aws_call_error(e: ClientError) -> AwsCallError:
    """The domain error of a botocore ClientError: the operation, AWS's error code and message."""
    error = e.response.get("Error", {})
    return AwsCallError(e.operation_name, str(error.get("Code", "?")), error.get("Message", str(e)))


def exit_code(error: BaseException | None) -> int:
    """The exit code a run of one connector ends with on `error`."""
    if isinstance(error, SinkError):
        return error.exit_code
    if isinstance(error, ClientError):
        return aws_call_error(error).exit_code
    return 1


def _print_run(config: SinkConfig, run: RunSettings, summary: RunSummary, prefix: str) -> None:

    lines = []
    for f in summary.files:
        where = f.key if "://" in f.key else f"s3://{run.bucket}/{f.key}"  # a table's data file: its URI
        lines.append(f"wrote {where}  records={f.record_count}  bytes={f.size_bytes}")
    lines.append(
        f"run finished in {summary.seconds:.1f}s: {len(summary.files)} files, "
        f"{summary.records_written} records, {summary.bytes_written} bytes; "
        f"{len(summary.committed)} partitions committed{where_tasks_ran(summary.executors)}"
    )
    if DeadLetterSettings.from_config(config).tolerates:
        lines.append(f"dead letters: {format_counts(add_counts(r.dead_letters for r in summary.committed))}")
    if TransformSettings.from_config(config):
        lines.append(f"dropped by transforms: {summary.records_dropped} records")
    print("\n".join(prefix + line for line in lines), flush=True)


def where_tasks_ran(executors: tuple[str, ...]) -> str:
    """The end of the run's summary line: which Spark executors ran its tasks (none when it wrote nothing)."""
    if not executors:
        return ""
    if executors == ("driver",):
        return "; tasks ran in the driver (local Spark)"
    return f"; tasks ran on executors {', '.join(executors)}"
