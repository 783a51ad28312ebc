"""`sink-engine` / `python -m sink_engine`: init, validate, doctor, run, status, verify, read, dlq, iceberg, restore."""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import sys
import time
from importlib import metadata
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

import sink_engine
from sink_engine.aws import S3Access, dynamodb_client, s3_client
from sink_engine.cli_options import MANY_CONFIGS, CommandParser, add_config_options, config_locations
from sink_engine.cli_run import aws_call_error, exit_code, run_command
from sink_engine.clock import now_ms
from sink_engine.config import SinkConfig
from sink_engine.config.cloud_registry import from_environment
from sink_engine.config.display import validation_report
from sink_engine.config.worker import WorkerSettings, read_worker
from sink_engine.dlq import cli as dlq_cli
from sink_engine.dlq.counts import format_counts
from sink_engine.driver.status import partition_status
from sink_engine.errors import OptionError, SinkError
from sink_engine.failpoints import SimulatedCrash
from sink_engine.format.block_gzip_reader import read_chunk_at
from sink_engine.offsets import OffsetStore, ensure_table, table_exists
from sink_engine.restore.progress import RestoreBoard
from sink_engine.restore.request import parse_names, parse_partitions, parse_time
from sink_engine.run.preflight import missing_table
from sink_engine.run.settings import RunSettings
from sink_engine.source.msk_brokers import kafka_client, with_cluster_brokers
from sink_engine.storage.s3 import bucket_exists
from sink_engine.target.choice import target_for, verified_target_for
from sink_engine.target.iceberg_tables import cli as iceberg_cli
from sink_engine.transform.settings import TransformSettings
from sink_engine.validation import load_checked_config

if TYPE_CHECKING:
    from sink_engine.offsets import OffsetStore
    from sink_engine.restore.engine import RestoreSummary


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
        if args.command == "validate":
            return _validate_each(config_locations(args), args.all, worker)
        if args.command == "run":
            configs, unloaded = _load_each(config_locations(args), worker)
            if args.continuous:
                from sink_engine.cli_continuous import run_continuous_command  # imports pyarrow

                return run_continuous_command(configs, args.wait_for_lease, unloaded)
            return run_command(configs, args.wait_for_lease, unloaded)
        config = _load(args.config, args.command, worker)
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


def _load(location: str, command: str, worker: WorkerSettings, prefix: str = "") -> SinkConfig:
    """The connector's config, checked, its secrets read and (but for `iceberg`, which asks MSK only where it reads
    Kafka: connector_tables) its brokers those of its MSK cluster; its warnings on standard error. A Confluent Cloud
    config's Schema Registry, when the file names none: SINK_SCHEMA_REGISTRY_URL."""
    config = load_checked_config(location, registry=from_environment(os.environ), worker=worker)
    for warning in config.warnings:
        print(f"warning: {prefix}config key {warning}", file=sys.stderr)
    return config if command == "iceberg" else with_cluster_brokers(config, kafka_client)


def _load_each(locations: list[str], worker: WorkerSettings) -> tuple[list[SinkConfig], dict[str, Exception]]:
    """Every connector of a `run` loaded as `_load` loads one: the configs that loaded, and each file that did not
    with its error (printed naming the file). One file's failure is that connector's (the others run: a batched run
    of the trigger is not held up by one broken config); none loading raises the first error; OptionError when two
    name one connector."""
    if len(locations) == 1:
        return [_load(locations[0], "run", worker)], {}
    configs, unloaded = [], {}
    for location in locations:
        try:
            configs.append(_load(location, "run", worker, f"{location}: "))
        except (SinkError, ClientError, BotoCoreError) as e:
            print(f"error: {location}: {e}", file=sys.stderr)
            unloaded[location] = e
    if not configs:
        failed = SinkError(f"none of the {len(locations)} connector configs loaded; nothing was run")
        failed.exit_code = exit_code(next(iter(unloaded.values())))
        raise failed
    _refuse_same_names([loc for loc in locations if loc not in unloaded], [c.name for c in configs])
    return configs, unloaded


def _refuse_same_names(locations: list[str], names: list[str]) -> None:
    """OptionError naming the files of a connector given twice (its two runs would contend for one lease)."""
    for name in dict.fromkeys(names):
        files = [location for location, named in zip(locations, names, strict=True) if named == name]
        if len(files) > 1:
            raise OptionError("--config", f"connector '{name}' is named by {' and '.join(files)}")


def package_version() -> str:
    """The installed distribution's version, else the source's (the EMR job archive copies sink_engine/ without
    its package metadata)."""
    try:
        return metadata.version("sink-engine")
    except metadata.PackageNotFoundError:
        return sink_engine.__version__


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="sink-engine", description="Exactly-once Kafka-to-S3 sink on Spark.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log structured events to stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    helps = {
        "init": "create the DynamoDB offsets table if missing and check that the bucket exists",
        "validate": "print each connector's effective config with defaults; exit 2 naming the key at fault",
        "doctor": "reach everything a run needs (Kafka, schema registry, S3, DynamoDB, secrets, Iceberg catalog) as "
        "the run would; exit 1 naming each failure",
        "run": "one bounded run of each connector given, in one Spark application: plan, write, commit "
        "(--continuous: one that stays up, its tasks serving every connector given, committing as files close)",
        "status": "committed offset, end offset, lag, last commit and last file per topic-partition",
    }
    for name, text in helps.items():
        sub = commands.add_parser(name, help=text, description=text)
        add_config_options(sub, many=name in MANY_CONFIGS)
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


def _validate_each(locations: list[str], show_all: bool, worker: WorkerSettings) -> int:
    """`_validate` of each connector (secrets not read), under a line naming its file when there are several; a
    config that fails is named with its file and the others are still shown. The first failure's exit code;
    OptionError when two files name one connector (a `run` of them is refused so)."""
    codes, loaded = [], {}
    for location in locations:
        if len(locations) > 1:
            print(f"== {location}")
        try:
            config = load_checked_config(
                location, resolve_secrets=False, registry=from_environment(os.environ), worker=worker
            )
        except SinkError as e:
            if len(locations) == 1:
                raise
            print(f"error: {location}: {e}", file=sys.stderr, flush=True)
            codes.append(e.exit_code)
            continue
        loaded[location] = config.name
        _validate(config, show_all)
    _refuse_same_names(list(loaded), list(loaded.values()))
    return codes[0] if codes else 0


def _validate(config: SinkConfig, show_all: bool) -> int:
    """The keys set (credentials masked, `${secrets:...}` and `${ssm:...}` references shown as written, not read)
    and those another key or the worker implies, with their effective values in Connect's notation, and how many
    keep their defaults (`--all`: those too); then the keys accepted as having no effect here, the unknown keys that
    are ignored (each with why and the known key it most resembles), the warnings, the chain of transforms, what the
    target makes of the config (Target.describe) and the worker settings that change nothing here
    (config/display.py)."""

    transforms, target = TransformSettings.from_config(config).describe(), target_for(config).describe()
    for line in validation_report(config, transforms, show_all, target):
        print(line)
    return 0


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
            + (f"  skipped: {format_counts(row.skipped)}" if row.skipped else "")
        )
    return 0


def _offset_store(run: RunSettings) -> OffsetStore:
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


def _restore(config: SinkConfig, args: argparse.Namespace) -> int:
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

    def started(summary: RestoreSummary) -> None:
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


COMMANDS = {"init": _init, "status": _status}
