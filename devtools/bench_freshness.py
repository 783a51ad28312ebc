"""`make bench-freshness`: how soon a record produced to Kafka appears in S3 with `sink-engine run --continuous`, and
what a continuous run costs against a bounded one. Prints a table. Usage:
    python -m devtools.bench_freshness [--seconds 60] [--rate 2000] [--records 2000000] [--soak-minutes 0] [--iceberg]
                                       [--upsert]

Every scenario runs a continuous run in this process (`run_continuous` on a local Spark session started once,
JSON values of about 220 bytes over 4 partitions, JsonFormat output) while a producer thread produces to its topic.
Freshness of a record: from when it was handed to the producer to the first listing of the bucket (every 0.25 s)
that shows the object holding it; an object's records are known without reading it, from the producer's own
record of which record went to which partition at which offset (an idempotent producer keeps each partition in
order) and from the files' start offsets. CPU counts this process tree less the broker and the S3 emulator.

- steady: `--rate` records/s for `--seconds`, `rotate.schedule.interval.ms` 5000 (issue 28's target: p99 at most
  10 s).
- full rate: `--records` produced as fast as the producer goes into a running continuous run, `flush.size` 50,000
  and the 5 s schedule (target: p99 at most 30 s).
- backlog: the same `--records` produced first, then drained by a continuous run and by a bounded run (`run_job`,
  the run phase of `make bench`) on the same Spark session: records/s (target: the continuous at least 0.9x the
  bounded), CPU µs/record (at most 1.2x) and Kafka read amplification, records fed to the writers / records
  produced (at most 1.1), all per record drained.
- `--iceberg`: the same with IcebergFormat (a SQL catalog in a SQLite file, the warehouse in the bucket,
  `iceberg.control.commit.interval-ms` 5000); freshness to the first look at the table's metadata (every 0.25 s)
  that shows the connector's snapshot recording the record's offset: what a table scan then reads.
- `--upsert`: `--iceberg` into an upsert table keyed by the events' `user_id` (997 keys, each changed again about
  every 997 records): each commit rewrites the files that hold a changed key (copy-on-write).
- soak (`--soak-minutes N`): the steady scenario for N minutes, RSS of the process tree sampled every 10 s; the
  mean of the first and of the last 5 minutes (target: within 10%).
"""

from __future__ import annotations

import argparse
import bisect
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import orjson
import psutil

from devtools.process_cpu import TreeCpu
from devtools.producer import SteadyProducer, create_topic, produce_events, sample_event
from devtools.stack import LocalStack
from sink_engine.config import SinkConfig, parse_config
from sink_engine.continuous.driver import ContinuousSummary, run_continuous
from sink_engine.driver.job import run_job
from sink_engine.format.settings import FormatSettings
from sink_engine.source.settings import SourceSettings

BUCKET, TABLE, PARTITIONS, SCHEDULE_MS = "freshness-lake", "freshness-offsets", 4, 5000
LIST_EVERY_S = 0.25


ICEBERG_CATALOG = "/tmp/sink-engine-bench-freshness-catalog.db"  # --iceberg: a SQL catalog, its warehouse in BUCKET
ICEBERG: dict[str, object] = {
    "format.class": "IcebergFormat",
    "iceberg.tables": "bench.${topic}",
    "iceberg.catalog.type": "sql",
    "iceberg.catalog.uri": f"sqlite:///{ICEBERG_CATALOG}",
    "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse",
    "iceberg.tables.auto-create-enabled": "true",
    "iceberg.control.commit.interval-ms": SCHEDULE_MS,
}
TARGET: dict[str, object] = {"format.class": "JsonFormat"}  # or ICEBERG (`--iceberg`)


def connector(stack: LocalStack, name: str, flush_size: int):
    config = parse_config(
        {
            "name": name,
            "config": {
                "topics": name,
                "bootstrap.servers": stack.bootstrap_servers,
                "s3.bucket.name": BUCKET,
                "s3.region": "us-east-1",
                "flush.size": flush_size,
                "rotate.schedule.interval.ms": SCHEDULE_MS,
                "value.converter": "JsonConverter",
                "value.converter.schemas.enable": "false",
                "offset.storage.dynamodb.table": TABLE,
                "tasks.max": PARTITIONS,
                "sink.lease.duration.ms": 30_000,
                **TARGET,
            },
        }
    )
    if _writes_tables(config):
        from sink_engine.target.iceberg_tables.catalog import ensure_namespace, open_catalog
        from sink_engine.target.iceberg_tables.settings import IcebergSettings

        settings = IcebergSettings.from_config(config)
        assert settings.table_template is not None  # one table, not fan-out
        ensure_namespace(open_catalog(settings), settings.table_template)
    return config


def _writes_tables(config: SinkConfig) -> bool:
    return FormatSettings.from_config(config).format_class == "iceberg"


def event_value(n: int) -> bytes:
    return orjson.dumps(sample_event(n, padding=95))


class Lister:
    """Looks every LIST_EVERY_S from a thread at what readers see: the topic's objects in a listing of the bucket, or
    (IcebergFormat) the connector's snapshots in the table's current metadata, each making the records its summary
    records visible to a table scan. `starts()`: partition -> (first offset, ms first seen) of each object or
    snapshot."""

    def __init__(self, config: SinkConfig):
        topics = SourceSettings.from_config(config).topics
        assert topics is not None  # the bench's config names its topic
        self._config, self._topic = config, topics[0]
        self._s3 = boto3.client("s3")
        self.seen: dict[tuple[int, int], int] = {}  # (partition, first offset) -> ms first seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Lister:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def starts(self) -> dict[int, list[tuple[int, int]]]:
        found: dict[int, list[tuple[int, int]]] = {}
        for (partition, first), seen_ms in self.seen.items():
            found.setdefault(partition, []).append((first, seen_ms))
        return found

    def _run(self) -> None:
        look = self._snapshots if _writes_tables(self._config) else self._objects
        while not self._stop.wait(LIST_EVERY_S):
            now = int(time.time() * 1000)
            for shown in look():
                self.seen.setdefault(shown, now)

    def _objects(self):
        pages = self._s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"topics/{self._topic}/")
        for item in (item for page in pages for item in page.get("Contents", [])):
            _, number, first = item["Key"].rsplit("/", 1)[1].rsplit(".", 1)[0].rsplit("+", 2)
            yield int(number), int(first)

    def _snapshots(self):
        from sink_engine.target.iceberg_tables.catalog import load_table, open_catalog
        from sink_engine.target.iceberg_tables.settings import IcebergSettings
        from sink_engine.target.iceberg_tables.snapshots import CONNECTOR, snapshot_offsets

        settings = IcebergSettings.from_config(self._config)
        table = load_table(open_catalog(settings), settings.table_identifier(self._topic))
        for snapshot in table.metadata.snapshots if table else []:
            if snapshot.summary is not None and snapshot.summary.get(CONNECTOR) == self._config.name:
                for entry in snapshot_offsets(snapshot):
                    if entry["next"] != entry["start"]:
                        yield entry["partition"], entry["start"] or 0


def freshness(lister: Lister, producer: SteadyProducer) -> list[int]:
    """Each landed record's ms from its produce to the first look that showed it (its object or snapshot)."""
    starts = lister.starts()
    ages = []
    for partition, files in starts.items():
        files.sort()
        offsets = [begin for begin, _ in files]
        for offset, n in enumerate(producer.produced[partition]):
            position = bisect.bisect_right(offsets, offset) - 1  # (everything landed: the last file ends last)
            if position >= 0:
                ages.append(files[position][1] - producer.produce_ms[n])
    return ages


@dataclass
class Running:
    """A continuous run in a thread of this process."""

    config: SinkConfig
    spark: Any
    stop: threading.Event = field(default_factory=threading.Event)
    summary: ContinuousSummary | None = None
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.summary = run_continuous(self.config, self.spark, boto3.client("dynamodb"), self.stop)
        except BaseException as e:  # noqa: BLE001 - reported by `end`
            self.error = e

    def end(self) -> ContinuousSummary:
        self.stop.set()
        self._thread.join(120)
        if self.error is not None:
            raise self.error
        assert self.summary is not None
        return self.summary


def caught_up(dynamodb, config, produced: dict[int, list[int]]) -> bool:
    items = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :o)",
        ExpressionAttributeValues={":pk": {"S": config.name}, ":o": {"S": "OFFSET#"}},
        ConsistentRead=True,
    )["Items"]
    committed = {int(i["partition"]["N"]): int(i["next_offset"]["N"]) for i in items}
    return all(committed.get(p, 0) >= len(ids) for p, ids in produced.items())


def wait_until(condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not caught up within {timeout_s:g}s")
        time.sleep(0.25)


def percentiles(ages: list[int]) -> tuple[float, float, float]:
    ordered = sorted(ages)
    return (statistics.median(ordered) / 1000, ordered[int(len(ordered) * 0.99) - 1] / 1000, ordered[-1] / 1000)


def rss_mb() -> float:
    """RSS of this process and its children but the local stack's (the broker and moto: their parent is this
    process, started first, so they are the two oldest children)."""
    root = psutil.Process()
    children = sorted(root.children(), key=lambda p: p.create_time())
    stack = {p.pid for p in children[:2]}
    tree = [root] + [p for c in children if c.pid not in stack for p in [c, *c.children(recursive=True)]]
    return sum(p.memory_info().rss for p in tree if p.is_running()) / 2**20


def steady(stack, spark, dynamodb, name: str, rate: int, seconds: float) -> dict:
    config = connector(stack, name, 1_000_000)
    create_topic(stack.bootstrap_servers, name, PARTITIONS)
    run = Running(config, spark)
    time.sleep(3)  # the tasks' consumers assigned
    with (
        Lister(config) as lister,
        SteadyProducer(stack.bootstrap_servers, name, list(range(PARTITIONS)), rate, event_value) as producer,
    ):
        time.sleep(seconds)
        producer.stop()
        wait_until(lambda: caught_up(dynamodb, config, producer.produced), 60)
        time.sleep(2 * LIST_EVERY_S)
    run.end()
    return {"records": producer.count, "ages": freshness(lister, producer)}


def soak(stack, spark, name: str, rate: int, seconds: float) -> list[tuple[float, float]]:
    """The steady scenario without the per-record bookkeeping (it would grow this process), RSS every 10 s."""
    create_topic(stack.bootstrap_servers, name, PARTITIONS)
    run = Running(connector(stack, name, 1_000_000), spark)
    rss = []
    with SteadyProducer(stack.bootstrap_servers, name, list(range(PARTITIONS)), rate, event_value, track=False):
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            time.sleep(10)
            rss.append((time.monotonic() - started, rss_mb()))
    run.end()
    return rss


def full_rate(stack, spark, dynamodb, records: int) -> dict:
    name = "fresh-full"
    config = connector(stack, name, 50_000)
    create_topic(stack.bootstrap_servers, name, PARTITIONS)
    run = Running(config, spark)
    time.sleep(3)
    with Lister(config) as lister:
        producer = SteadyProducer(stack.bootstrap_servers, name, list(range(PARTITIONS)), 0, event_value, records)
        with producer:
            producer.done.wait()
        wait_until(lambda: caught_up(dynamodb, config, producer.produced), 300)
        time.sleep(2 * LIST_EVERY_S)
    run.end()
    return {"records": producer.count, "ages": freshness(lister, producer)}


def backlog(stack, spark, dynamodb, records: int, cpu: TreeCpu) -> dict:
    rows = {}
    for mode in ("bounded", "continuous"):
        name = f"fresh-backlog-{mode}"
        config = connector(stack, name, 50_000)
        create_topic(stack.bootstrap_servers, name, PARTITIONS)
        produce_events(stack.bootstrap_servers, name, records, PARTITIONS, padding=95)
        before, started = cpu.sample(), time.perf_counter()
        if mode == "bounded":
            summary = run_job(config, spark, dynamodb)
            fed = sum(r.records_read for r in summary.results)
        else:
            run = Running(config, spark)
            wait_until(
                lambda c=config: caught_up(dynamodb, c, {p: [0] * (records // PARTITIONS) for p in range(PARTITIONS)}),
                300,
            )
            seconds_to_catch_up = time.perf_counter() - started
            continuous = run.end()
            fed = sum(r.records_read for r in continuous.reports)
        seconds = time.perf_counter() - started if mode == "bounded" else seconds_to_catch_up
        spent = sum(TreeCpu.spent(before, cpu.sample()).values())
        rows[mode] = {  # per record drained (an upsert table's rows are fewer: a key's last change)
            "seconds": seconds,
            "records": records,
            "cpu_us": spent / records * 1e6,
            "amplification": fed / records,
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--soak-minutes", type=float, default=0)
    parser.add_argument(
        "--iceberg",
        action="store_true",
        help="IcebergFormat (a SQL catalog, iceberg.control.commit.interval-ms 5000): freshness to a table scan",
    )
    parser.add_argument("--upsert", action="store_true", help="--iceberg into an upsert table keyed by user_id")
    args = parser.parse_args()
    args.iceberg = args.iceberg or args.upsert
    if args.upsert:
        ICEBERG.update({"iceberg.tables.upsert-mode-enabled": "true", "iceberg.tables.default-id-columns": "user_id"})
    if args.iceberg:
        TARGET.clear()
        TARGET.update(ICEBERG)
        Path(ICEBERG_CATALOG).unlink(missing_ok=True)
    with LocalStack() as stack:
        stack.apply_env()
        cpu = TreeCpu.without_children_so_far()
        dynamodb = stack.create_store(BUCKET, TABLE)
        from sink_engine.run.spark_runner import spark_session, warm_up

        spark = spark_session("sink-engine-bench-freshness")
        warm_up(spark, PARTITIONS)
        print(f"steady: {args.rate} records/s for {args.seconds:g} s ...", flush=True)
        calm = steady(stack, spark, dynamodb, "fresh-steady", args.rate, args.seconds)
        print(f"full rate: {args.records:,} records as fast as the producer goes ...", flush=True)
        full = full_rate(stack, spark, dynamodb, args.records)
        print(f"backlog: {args.records:,} records, bounded then continuous ...", flush=True)
        drained = backlog(stack, spark, dynamodb, args.records, cpu)
        rss: list = []
        if args.soak_minutes:
            print(f"soak: {args.soak_minutes:g} minutes at {args.rate} records/s ...", flush=True)
            rss = soak(stack, spark, "fresh-soak", args.rate, args.soak_minutes * 60)
        spark.stop()
    print()
    if args.iceberg:
        print(
            f"Freshness (produce -> visible in a table scan), {PARTITIONS} partitions, IcebergFormat"
            f"{' (upsert table, id user_id)' if args.upsert else ''}, iceberg.control.commit.interval-ms {SCHEDULE_MS}"
        )
    else:
        print(
            f"Freshness (produce -> object listed), {PARTITIONS} partitions, rotate.schedule.interval.ms {SCHEDULE_MS}"
        )
    print("| scenario | records | p50 s | p99 s | max s | target p99 |")
    print("|---|---|---|---|---|---|")
    for label, row, target in ((f"steady, {args.rate}/s", calm, 10), ("full rate", full, 30)):
        p50, p99, top = percentiles(row["ages"])
        print(f"| {label} | {row['records']:,} | {p50:.2f} | {p99:.2f} | {top:.2f} | {target} |")
    print()
    print(f"Backlog of {args.records:,} records (flush.size 50,000): a bounded run against a continuous run")
    print("| run | seconds | records/s | CPU µs/record | read amplification |")
    print("|---|---|---|---|---|")
    for mode, row in drained.items():
        print(
            f"| {mode} | {row['seconds']:.2f} | {row['records'] / row['seconds']:,.0f} | {row['cpu_us']:.2f} | "
            f"{row['amplification']:.3f} |"
        )
    bounded, continuous = drained["bounded"], drained["continuous"]
    ratio = (continuous["records"] / continuous["seconds"]) / (bounded["records"] / bounded["seconds"])
    print(
        f"continuous / bounded: records/s {ratio:.2f}x (target at least 0.9x), CPU per record "
        f"{continuous['cpu_us'] / bounded['cpu_us']:.2f}x (target at most 1.2x)"
    )
    if rss:
        first = [mb for t, mb in rss if t <= 300]
        last = [mb for t, mb in rss if t >= rss[-1][0] - 300]
        print(
            f"soak RSS: first 5 minutes {statistics.mean(first):.0f} MB, last 5 minutes "
            f"{statistics.mean(last):.0f} MB ({statistics.mean(last) / statistics.mean(first):.2f}x; target "
            "within 10%)"
        )


if __name__ == "__main__":
    main()
