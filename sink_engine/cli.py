"""`sink-engine` / `python -m sink_engine`: init, validate, doctor, run, status, verify, read, dlq, iceberg, restore."""

from __future__ import annotations

import argparse
import datetime
import logging
import math
import os
import sys
import time
from importlib import metadata

from botocore.exceptions import BotoCoreError, ClientError

import sink_engine
from sink_engine.aws import S3Access, dynamodb_client, s3_client
from sink_engine.cli_options import add_config_options
from sink_engine.config import SinkConfig
from sink_engine.config.cloud_registry import from_environment
from sink_engine.config.display import validation_report
from sink_engine.config.worker import read_worker
from sink_engine.dlq import cli as dlq_cli
from sink_engine.dlq.counts import add_counts, format_counts
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.driver.job import now_ms, run_job
from sink_engine.driver.status import partition_status
from sink_engine.errors import AwsCallError, SinkError
from sink_engine.failpoints import SimulatedCrash
from sink_engine.format.block_gzip_reader import read_chunk_at
from sink_engine.offsets import OffsetStore, ensure_table, table_exists
from sink_engine.progress import ProgressBoard
from sink_engine.restore.progress import RestoreBoard
from sink_engine.restore.request import parse_names, parse_partitions, parse_time
from sink_engine.run.metrics import publisher_from_environment
from sink_engine.run.preflight import missing_table, preflight
from sink_engine.run.settings import RunSettings
from sink_engine.run.spark_runner import spark_session, tasks_share_driver_process
from sink_engine.run.stopping import JvmShutdownStop, stop_on_signals
from sink_engine.source.msk_brokers import kafka_client, with_cluster_brokers
from sink_engine.storage.s3 import bucket_exists
from sink_engine.target.choice import target_for, verified_target_for
from sink_engine.target.iceberg_tables import cli as iceberg_cli
from sink_engine.transform.settings import TransformSettings
from sink_engine.validation import load_checked_config


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    try:
        worker = read_worker(args.worker, os.environ)  # --worker, CONNECT_*, SINK_MSK_CLUSTER_ARN
        if args.command == "doctor":  # loads the config itself: a config or secret that fails is one of its findings
            from sink_engine.doctor.runner import doctor  # imports pyarrow

            return doctor(args.config, from_environment(os.environ), worker=worker)
        # a Confluent Cloud config's Schema Registry, when the file names none: SINK_SCHEMA_REGISTRY_URL
        config = load_checked_config(
            args.config,
            resolve_secrets=args.command != "validate",
            registry=from_environment(os.environ),
            worker=worker,
        )
        if args.command == "validate":
            return _validate(config, args.all)
        for warning in config.warnings:
            print(f"warning: config key {warning}", file=sys.stderr)
        if args.command != "iceberg":  # iceberg maintain asks MSK only where it reads Kafka (connector_tables)
            config = with_cluster_brokers(config, kafka_client)
        if args.command == "read":
            return _read(config, args.key, args.offset)
        if args.command == "dlq":
            return dlq_cli.run(config, args)
        if args.command == "iceberg":
            return iceberg_cli.run(config, args)
        if args.command == "verify":
            return _verify(config, args.kafka, args.topic, args.partition, args.verbose)
        if args.command == "restore":
            return _restore(config, args)
        if args.command == "run":
            return (
                _run_continuous(config, args.wait_for_lease) if args.continuous else _run(config, args.wait_for_lease)
            )
        return COMMANDS[args.command](config)
    except SinkError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except ClientError as e:  # a call the engine does not handle itself: report it, never a traceback
        error = aws_call_error(e)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except BotoCoreError as e:  # the endpoint could not be reached after the SDK's retries
        print(f"error: AWS request failed: {e}", file=sys.stderr)
        return 1
    except SimulatedCrash as e:
        print(f"crash: {e}", file=sys.stderr)
        return 70


def aws_call_error(e: ClientError) -> AwsCallError:
    """The domain error of a botocore ClientError: the operation, AWS's error code and message."""
    error = e.response.get("Error", {})
    return AwsCallError(e.operation_name, str(error.get("Code", "?")), error.get("Message", str(e)))


def package_version() -> str:
    """The installed distribution's version, else the source's (the EMR job archive copies sink_engine/ without
    its package metadata)."""
    try:
        return metadata.version("sink-engine")
    except metadata.PackageNotFoundError:
        return sink_engine.__version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sink-engine", description="Exactly-once Kafka-to-S3 sink on Spark.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log structured events to stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    helps = {
        "init": "create the DynamoDB offsets table if missing and check that the bucket exists",
        "validate": "print the effective config with defaults; exit 2 naming the key at fault",
        "doctor": "reach everything a run needs (Kafka, schema registry, S3, DynamoDB, secrets, Iceberg catalog) as "
        "the run would; exit 1 naming each failure",
        "run": "one bounded run: plan, write, commit (--continuous: a run that stays up, committing as files close)",
        "status": "committed offset, end offset, lag, last commit and last file per topic-partition",
    }
    for name, text in helps.items():
        sub = commands.add_parser(name, help=text, description=text)
        add_config_options(sub)
        if name == "validate":
            sub.add_argument("--all", action="store_true", help="also list every key left at its default")
        if name == "run":
            sub.add_argument(
                "--continuous",
                action="store_true",
                help="keep running and write what arrives (records in S3 within seconds) until SIGTERM or SIGINT; "
                "then commit what is closed, release the lease and exit 0",
            )
            sub.add_argument(
                "--wait-for-lease",
                action="store_true",
                help="when another run holds the connector's lease, wait until it is released or lapses (a killed "
                "run's lapses after sink.lease.duration.ms), then run; without it a bounded run exits 3 at once and "
                "a continuous run waits up to 1.5 leases",
            )
    read = commands.add_parser("read", help=READ_HELP, description=READ_HELP)
    add_config_options(read)
    read.add_argument("--key", required=True, help="key of a Block-GZIP object in s3.bucket.name")
    read.add_argument("--offset", required=True, type=int, help="Kafka offset of the record")
    verify = commands.add_parser("verify", help=VERIFY_HELP, description=VERIFY_HELP)
    add_config_options(verify)
    verify.add_argument(
        "--kafka",
        action="store_true",
        help="also read from Kafka the earliest retained offsets (where a commit does not know its "
        "first) and the dead letters of errors.deadletterqueue.topic.name",
    )
    verify.add_argument("--topic", help="only this topic")
    verify.add_argument("--partition", type=int, help="only this partition")
    dlq_cli.add_parser(commands)
    iceberg_cli.add_parser(commands)
    restore = commands.add_parser("restore", help=RESTORE_HELP, description=RESTORE_HELP)
    add_config_options(restore)
    restore.add_argument("--topic", required=True, help="the source topic whose backup is read")
    restore.add_argument("--target-topic", required=True, help="the topic to produce into")
    restore.add_argument("--partitions", help="only these source partitions, e.g. 0,3,5")
    restore.add_argument("--from-offset", type=int, help="original offsets from (inclusive)")
    restore.add_argument("--to-offset", type=int, help="... to (inclusive)")
    restore.add_argument(
        "--from-time",
        help="record timestamps from: epoch ms or ISO-8601 with a zone (inclusive; EnvelopeFormat backups)",
    )
    restore.add_argument("--to-time", help="... to (inclusive)")
    restore.add_argument(
        "--target-bootstrap-servers",
        help="produce to this cluster, plain connection (default: the connector's cluster and client settings)",
    )
    restore.add_argument(
        "--create-target", action="store_true", help="create a missing target topic with the source's partition count"
    )
    restore.add_argument(
        "--binary-headers",
        help="header names whose values a headers sidecar may hold as base64 "
        "(bytes that were not UTF-8): restored as bytes; other header values as their UTF-8 text",
    )
    return parser


def _init(config: SinkConfig) -> int:

    run = RunSettings.from_config(config)
    table, bucket = run.offsets_table, run.bucket
    created = ensure_table(dynamodb_client(run.region), table)
    print(f"offsets table {table}: {'created' if created else 'exists'}")
    if not bucket_exists(s3_client(S3Access.from_config(config)), bucket):
        print(f"error: bucket {bucket} does not exist or is not reachable (s3.bucket.name)", file=sys.stderr)
        return 2
    print(f"bucket {bucket}: exists")
    for line in target_for(config).init():
        print(line)
    return 0


def _validate(config: SinkConfig, show_all: bool) -> int:
    """The keys set (credentials masked, `${secrets:...}` and `${ssm:...}` references shown as written, not read)
    and those another key or the worker implies, with their effective values in Connect's notation, and how many
    keep their defaults (`--all`: those too); then the keys accepted as having no effect here, the unknown keys that
    are ignored (each with why and the known key it most resembles), the warnings, the chain of transforms and the
    worker settings that change nothing here (config/display.py)."""

    for line in validation_report(config, TransformSettings.from_config(config).describe(), show_all):
        print(line)
    return 0


PIPE_PROGRESS_S = 10.0  # a bounded run's progress line in a pipe or a log (local Spark)


def _say(line: str) -> None:
    """A line of what a run is doing, on standard output at once (a terminal, a pipe or a log)."""
    print(line, flush=True)


def _checked_before_spark(config: SinkConfig, wait_for_lease_s: float) -> None:
    """The run's checks that need no Spark (run/preflight.py), then the line that Spark starts. Runs before the
    stop handlers are installed: a signal while it waits for a lease ends the process, which holds nothing yet."""

    preflight(config, wait_for_lease_s, _say, now_ms)
    _say("offsets table, bucket, Kafka and lease checked; starting Spark")


def _run(config: SinkConfig, wait_for_lease: bool = False) -> int:
    """`run`: one bounded run; SIGTERM, SIGINT or its driver JVM's shutdown cancel it (run/stopping.py)."""

    run = RunSettings.from_config(config)
    metrics = publisher_from_environment(os.environ, run.region)  # SINK_METRICS=cloudwatch: deployed job
    _checked_before_spark(config, math.inf if wait_for_lease else 0)
    with stop_on_signals(config.name) as stop:
        spark = spark_session(f"sink-engine-{config.name}")
        # the tasks can report through the driver's disk only when they run in its process; a pipe gets the totals
        tty = sys.stdout.isatty()
        board = (
            ProgressBoard(sys.stdout, None if tty else PIPE_PROGRESS_S) if tasks_share_driver_process(spark) else None
        )
        with JvmShutdownStop(spark, config.name, stop, run.lease_ms / 1000):
            summary = run_job(
                config, spark, dynamodb_client(run.region), progress=board, metrics=metrics, say=_say, stop=stop
            )
            _print_run(config, run, summary)
    return 0


def _print_run(config: SinkConfig, run: RunSettings, summary) -> None:

    for f in summary.files:
        where = f.key if "://" in f.key else f"s3://{run.bucket}/{f.key}"  # a table's data file: its URI
        print(f"wrote {where}  records={f.record_count}  bytes={f.size_bytes}")
    print(
        f"run finished in {summary.seconds:.1f}s: {len(summary.files)} files, "
        f"{summary.records_written} records, {summary.bytes_written} bytes; "
        f"{len(summary.committed)} partitions committed{_where_tasks_ran(summary.executors)}"
    )
    if DeadLetterSettings.from_config(config).tolerates:
        print(f"dead letters: {format_counts(add_counts(r.dead_letters for r in summary.committed))}")
    if TransformSettings.from_config(config):
        print(f"dropped by transforms: {summary.records_dropped} records")


def _run_continuous(config: SinkConfig, wait_for_lease: bool = False) -> int:
    """`run --continuous`: until SIGTERM or SIGINT, or its driver JVM's shutdown (EMR Serverless' CancelJobRun with a
    grace period: run/stopping.py). It waits for a held lease up to 1.5 leases (EMR retries a failed streaming
    attempt at once: the lease of the attempt that failed is still held), or for as long as it is held with
    `--wait-for-lease`."""
    from sink_engine.continuous.driver import check_continuous, run_continuous  # imports pyarrow

    run = check_continuous(config).run
    _checked_before_spark(config, math.inf if wait_for_lease else 1.5 * run.lease_ms / 1000)
    with stop_on_signals(config.name) as stop:
        spark = spark_session(f"sink-engine-{config.name}")
        with JvmShutdownStop(spark, config.name, stop, run.lease_ms / 1000):
            summary = run_continuous(config, spark, dynamodb_client(run.region), stop, say=_say)
            _print_continuous(summary)
    return 0


def _print_continuous(summary) -> None:
    for report in sorted(summary.reports, key=lambda r: (r.tp.topic, r.tp.partition)):
        print(f"{report.tp}: committed {report.committed}, {report.records_written} records in {report.files} files")
    print(
        f"continuous run stopped after {summary.seconds:.1f}s: {summary.files} files, {summary.records_written} "
        f"records{_where_tasks_ran(summary.executors)}"
    )


def _where_tasks_ran(executors: tuple[str, ...]) -> str:
    """The end of the run's summary line: which Spark executors ran its tasks (none when it wrote nothing)."""
    if not executors:
        return ""
    if executors == ("driver",):
        return "; tasks ran in the driver (local Spark)"
    return f"; tasks ran on executors {', '.join(executors)}"


def _status(config: SinkConfig) -> int:

    store = _offset_store(RunSettings.from_config(config))
    print(f"{'topic-partition':<28} {'committed':>10} {'end':>10} {'lag':>8}  {'last commit (UTC)':<19}  last file")
    for row in partition_status(config, store):
        when = (
            "-"
            if row.committed_at_ms is None
            else datetime.datetime.fromtimestamp(row.committed_at_ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")
        )
        committed = "-" if row.committed is None else row.committed
        print(
            f"{str(row.tp):<28} {committed:>10} {row.end_offset:>10} {row.lag:>8}  {when:<19}  "
            f"{row.last_file or '-'}"
            + (f"  dead letters: {format_counts(row.dead_letters)}" if row.dead_letters else "")
        )
    return 0


def _offset_store(run: RunSettings):
    """The connector's committed offsets, read as a run reads them; SinkError when the table does not exist."""

    dynamodb = dynamodb_client(run.region)
    if not table_exists(dynamodb, run.offsets_table):
        raise SinkError(missing_table(run.offsets_table))
    return OffsetStore(dynamodb, run.offsets_table, now_ms)


READ_HELP = "print the record at a Kafka offset from a Block-GZIP object, fetching only its gzip member"


def _read(config: SinkConfig, key: str, offset: int) -> int:

    chunk = read_chunk_at(s3_client(S3Access.from_config(config)), RunSettings.from_config(config).bucket, key, offset)
    record = chunk.record(offset)
    if record is None:
        print(
            f"note: offsets in this chunk are not consecutive; printing its {len(chunk.lines)} records", file=sys.stderr
        )
    for line in [record] if record is not None else chunk.lines:
        print(line.decode("utf-8"))
    return 0


VERIFY_HELP = (
    "check that every committed offset is in exactly one data object or dead letter, or was skipped and "
    "counted; exit 1 naming each gap or overlap"
)


def _verify(config: SinkConfig, kafka: bool, topic: str | None, partition: int | None, verbose: bool) -> int:
    store = _offset_store(RunSettings.from_config(config))
    return verified_target_for(config).verify(store, kafka, topic, partition, sys.stdout, verbose)


RESTORE_HELP = (
    "produce a connector's backed-up records of a topic into a target topic, each exactly once across "
    "kills and reruns, with keys, headers and timestamps; prints counts per partition"
)


def _restore(config: SinkConfig, args) -> int:
    from sink_engine.restore import RestoreRequest, restore  # imports pyarrow
    from sink_engine.restore.settings import RestoreSettings  # imports pyarrow

    request = RestoreRequest(
        config,
        args.topic,
        args.target_topic,
        parse_partitions("--partitions", args.partitions),
        args.from_offset,
        args.to_offset,
        parse_time("--from-time", args.from_time),
        parse_time("--to-time", args.to_time),
        args.target_bootstrap_servers,
        args.create_target,
        parse_names(args.binary_headers),
    )
    board = RestoreBoard(sys.stdout) if sys.stdout.isatty() else None
    lacking = RestoreSettings.from_config(config).not_restored()
    if lacking:
        print(f"warning: the backup of {args.topic} holds no {'; no '.join(lacking)}", file=sys.stderr, flush=True)

    def started(summary) -> None:
        if summary.created_target:
            print(f"created {args.target_topic} with {summary.target_partitions} partitions")
        if summary.partition_for_partition:
            print(f"partition for partition: {args.topic} and {args.target_topic} have {summary.target_partitions}")
        else:
            print(
                f"through the partitioner: {args.topic} has {summary.source_partitions} partitions, "
                f"{args.target_topic} {summary.target_partitions}; records go by their keys' murmur2 hash (null keys "
                "at random), so a partition's order holds per key only"
            )
        sys.stdout.flush()
        if board is not None:
            board.start(summary.counts)

    def waiting(owner: str, until_ms: int) -> None:
        until = datetime.datetime.fromtimestamp(until_ms / 1000).astimezone().strftime("%H:%M:%S %Z")
        left = max(0.0, until_ms / 1000 - time.time())
        print(
            f"waiting: restore {owner} holds the lease of {args.target_topic} until {until} (in {left:.0f} s)",
            flush=True,
        )

    try:
        summary = restore(
            request,
            dynamodb_client(RunSettings.from_config(config).region),
            s3_client(S3Access.from_config(config)),
            on_start=started,
            on_wait=waiting,
        )
    finally:
        if board is not None:
            board.stop()
    print(f"{'partition':>9}  {'read':>10}  {'present':>10}  {'produced':>10}")
    for partition, counts in sorted(summary.counts.items()):
        print(f"{partition:>9}  {counts.read:>10}  {counts.present:>10}  {counts.produced:>10}")
    totals = summary.counts.values()
    print(
        f"restore finished in {summary.seconds:.1f}s: {sum(c.read for c in totals)} records read from "
        f"{summary.objects} objects ({summary.s3_requests} S3 requests), {sum(c.present for c in totals)} already "
        f"present ({summary.scanned} target records scanned), {sum(c.produced for c in totals)} produced"
    )
    if summary.restamped:
        print(
            f"{summary.restamped} record(s) had the timestamp 0, which a Kafka client (librdkafka) cannot set: "
            "they were produced with the produce time"
        )
    return 0


COMMANDS = {"init": _init, "run": _run, "status": _status}
