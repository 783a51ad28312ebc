"""`make bench-peers`: sink-engine beside the connectors users would run instead, on the same broker, the same records
and the same machine; prints a table (docs/performance/peers.md). Usage:
    python -m devtools.bench_peers [--records 2000000] [--rate 2000] [--seconds 60] [--target s3|iceberg]

Records: JSON values of exactly 224 bytes (`event_value`), 8 partitions, a topic per side and scenario. Sides, per
target: sink-engine's bounded run (`run_job`) and continuous run (`run_continuous`) on one warm local Spark session,
and the peers (devtools/iceberg_peer.py: Apache Iceberg's Kafka Connect sink, a warm standalone worker). S3 objects
have no peer here: Maven Central serves none of the S3 sinks looked for (docs/performance/peers.md).

- backlog: `--records` produced first, then drained; records/s from the start of the run (or the connector's
  creation) to every record visible (offsets committed for sink-engine, the table's rows for the peer), CPU seconds
  per million records of every process of the side (this process with the Spark JVM and its Python workers, less
  the broker and moto; the worker's JVM for the peer), their peak RSS, objects or data files written.
- steady: `--rate` records/s for `--seconds` with rotation or commit every 5 s (`rotate.schedule.interval.ms`,
  `iceberg.control.commit.interval-ms`); freshness from the produce to the first look (every 0.25 s) showing the
  record: its object in a listing, or the snapshot whose added data files hold it.

The peers run last: a worker JVM this process reaped would count in this process's children's CPU.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
from pyiceberg.table import Table

from devtools import bench_freshness as fresh
from devtools.iceberg_peer import IcebergPeer
from devtools.peer_measures import (
    PeakRss,
    SnapshotsSeen,
    cpu_seconds,
    object_event_ids,
    object_keys,
    table_event_ids,
    table_files,
    table_records,
)
from devtools.process_cpu import TreeCpu
from devtools.producer import SteadyProducer, create_topic, produce, sample_event
from devtools.stack import LocalStack
from sink_engine.config import SinkConfig, parse_config
from sink_engine.driver.job import run_job

BUCKET, TABLE = fresh.BUCKET, fresh.TABLE  # (fresh's Lister and caught_up read these)
PARTITIONS, RECORD_BYTES, INTERVAL_MS, PEER_TASKS = 8, 224, 5000, 2
WARM_ID = 10**9  # the ids of steady_table's first records, apart from the measured ones (0 up)
TARGETS = {"s3": "S3 objects (JsonFormat)", "iceberg": "Iceberg table"}
PEERS = {"s3": (), "iceberg": ("Iceberg Kafka Connect sink 1.10.1",)}


def event_value(n: int) -> bytes:
    """Event `n` as JSON of exactly RECORD_BYTES bytes (its `page` padded)."""
    event = {**sample_event(n), "page": ""}
    event["page"] = "x" * (RECORD_BYTES - len(orjson.dumps(event)))
    return orjson.dumps(event)


@dataclass
class Bench:
    """What every scenario shares: the stack, the Spark session, the CPU meter of this process tree, a folder."""

    stack: LocalStack
    spark: Any
    dynamodb: object
    folder: Path
    cpu: TreeCpu = field(default_factory=TreeCpu.without_children_so_far)

    def ours(self) -> list[psutil.Process]:
        """This process and its descendants less the stack's (the broker, moto)."""
        root = psutil.Process()
        return [root] + [p for p in root.children(recursive=True) if p.pid not in self.cpu.excluded]


@dataclass
class Row:
    target: str
    side: str
    records: int = 0
    seconds: float = 0.0
    cpu_s: float = 0.0
    rss_mb: float = 0.0
    files: int = 0
    ages: list[int] = field(default_factory=list)
    landed: Callable[[], list[int]] | None = None  # the event ids the side wrote, read back


def our_config(bench: Bench, topic: str, target: str, flush_size: int) -> SinkConfig:
    """sink-engine's connector on `topic`: JsonFormat objects or an Iceberg table (a SQL catalog in a SQLite file of
    its own, the warehouse in the bucket), rotation or commits every 5 s."""
    settings: dict[str, object] = {
        "topics": topic,
        "bootstrap.servers": bench.stack.bootstrap_servers,
        "s3.bucket.name": BUCKET,
        "s3.region": "us-east-1",
        "flush.size": flush_size,
        "rotate.schedule.interval.ms": INTERVAL_MS,
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.storage.dynamodb.table": TABLE,
        "tasks.max": PARTITIONS,
        "sink.lease.duration.ms": 30_000,
        "format.class": "JsonFormat",
    }
    if target == "iceberg":
        settings |= {**fresh.ICEBERG, "iceberg.catalog.uri": f"sqlite:///{bench.folder / 'our-catalog.db'}"}
    config = parse_config({"name": topic, "config": settings})
    if target == "iceberg":
        from sink_engine.target.iceberg_tables.catalog import ensure_namespace, open_catalog
        from sink_engine.target.iceberg_tables.settings import IcebergSettings

        iceberg = IcebergSettings.from_config(config)
        assert iceberg.table_template is not None  # one table, not fan-out
        ensure_namespace(open_catalog(iceberg), iceberg.table_template)
    return config


def our_table(config, topic: str):
    from sink_engine.target.iceberg_tables.catalog import load_table, open_catalog
    from sink_engine.target.iceberg_tables.settings import IcebergSettings

    settings = IcebergSettings.from_config(config)
    return load_table(open_catalog(settings), settings.table_identifier(topic))


def per_partition(records: int) -> dict[int, list[int]]:
    """How many records each partition holds after `produce` dealt `records` round-robin (as lists, for caught_up)."""
    return {p: [0] * (records // PARTITIONS + (p < records % PARTITIONS)) for p in range(PARTITIONS)}


def fill(bench: Bench, topic: str, records: int) -> None:
    create_topic(bench.stack.bootstrap_servers, topic, PARTITIONS)
    chunk = 200_000  # (a multiple of PARTITIONS: each call deals from partition 0)
    for first in range(0, records, chunk):
        values = [event_value(n) for n in range(first, min(records, first + chunk))]
        produce(bench.stack.bootstrap_servers, topic, values, PARTITIONS)


def backlog_ours(bench: Bench, target: str, mode: str, records: int) -> Row:
    topic = f"peers_{target}_{mode}_backlog"
    config = our_config(bench, topic, target, 50_000)
    fill(bench, topic, records)
    before = bench.cpu.sample()
    with PeakRss(bench.ours) as rss:
        started = time.perf_counter()
        if mode == "bounded":
            run_job(config, bench.spark, bench.dynamodb)
        else:
            run = fresh.Running(config, bench.spark)
            fresh.wait_until(lambda: fresh.caught_up(bench.dynamodb, config, per_partition(records)), 1800)
        seconds = time.perf_counter() - started
        if mode == "continuous":
            run.end()
    row = Row(TARGETS[target], f"sink-engine {mode}", records, seconds, rss_mb=rss.mb)
    row.cpu_s = sum(TreeCpu.spent(before, bench.cpu.sample()).values())
    if target == "iceberg":
        row.files = table_files(our_table(config, topic))
        row.landed = lambda: table_event_ids(_existing(our_table(config, topic)))
    else:
        row.files = len(object_keys(BUCKET, f"topics/{topic}/"))
        row.landed = lambda: object_event_ids(BUCKET, f"topics/{topic}/")
    return row


def _existing(table: Table | None) -> Table:
    assert table is not None, "no table was created"
    return table


def steady_ours(bench: Bench, target: str, rate: int, seconds: float) -> list[int]:
    topic = f"peers_{target}_steady"
    config = our_config(bench, topic, target, 1_000_000)
    create_topic(bench.stack.bootstrap_servers, topic, PARTITIONS)
    run = fresh.Running(config, bench.spark)
    try:
        if target == "iceberg":
            return steady_table(bench, topic, lambda: our_table(config, topic), rate, seconds)
        time.sleep(3)  # the tasks' consumers assigned
        with (
            fresh.Lister(config) as lister,
            SteadyProducer(
                bench.stack.bootstrap_servers, topic, list(range(PARTITIONS)), rate, event_value
            ) as producer,
        ):
            time.sleep(seconds)
            producer.stop()
            fresh.wait_until(lambda: fresh.caught_up(bench.dynamodb, config, producer.produced), 120)
            time.sleep(2 * fresh.LIST_EVERY_S)
        return fresh.freshness(lister, producer)
    finally:
        run.end()


def steady_table(bench: Bench, topic: str, load: Callable[[], Table | None], rate: int, seconds: float) -> list[int]:
    """Freshness into a table its writer is already writing: first a record per partition (ids from WARM_ID) until
    a snapshot shows them (the writer's start, its table created), then `rate` records/s for `seconds`."""
    warm = [event_value(WARM_ID + p) for p in range(PARTITIONS)]
    produce(bench.stack.bootstrap_servers, topic, warm, PARTITIONS)
    fresh.wait_until(lambda: table_records(load()) >= PARTITIONS, 180)
    partitions = list(range(PARTITIONS))
    with (
        SnapshotsSeen(load) as seen,
        SteadyProducer(bench.stack.bootstrap_servers, topic, partitions, rate, event_value) as producer,
    ):
        time.sleep(seconds)
        producer.stop()
        fresh.wait_until(lambda: table_records(load()) >= PARTITIONS + producer.count, 120)
        time.sleep(2 * fresh.LIST_EVERY_S)
    return seen.ages(_existing(load()), producer.produce_ms)


def backlog_peer(bench: Bench, records: int) -> Row:
    topic = "peers_iceberg_peer_backlog"
    fill(bench, topic, records)
    with IcebergPeer(bench.stack, bench.folder, BUCKET, PEER_TASKS) as peer:
        process = psutil.Process(peer.pid)
        before = cpu_seconds(peer.pid)
        with PeakRss(lambda: [process]) as rss:
            started = time.perf_counter()
            peer.submit(topic, INTERVAL_MS)
            fresh.wait_until(lambda: table_records(peer.table(topic)) >= records, 1800)
            seconds = time.perf_counter() - started
        row = Row(TARGETS["iceberg"], PEERS["iceberg"][0], records, seconds, cpu_seconds(peer.pid) - before, rss.mb)
        row.files = table_files(peer.table(topic))
    row.landed = lambda: table_event_ids(_existing(peer.table(topic)))
    return row


def steady_peer(bench: Bench, rate: int, seconds: float) -> list[int]:
    topic = "peers_iceberg_peer_steady"
    create_topic(bench.stack.bootstrap_servers, topic, PARTITIONS)
    with IcebergPeer(bench.stack, bench.folder, BUCKET, PEER_TASKS) as peer:
        peer.submit(topic, INTERVAL_MS)
        return steady_table(bench, topic, lambda: peer.table(topic), rate, seconds)


def run(bench: Bench, targets: list[str], records: int, rate: int, seconds: float) -> list[Row]:
    """Every side of `targets`, sink-engine's first (see the module's note on the peers' CPU)."""
    rows = []
    for target in targets:
        for mode in ("bounded", "continuous"):
            print(f"{TARGETS[target]}: sink-engine {mode}, backlog of {records:,} ...", flush=True)
            rows.append(backlog_ours(bench, target, mode, records))
        if seconds:
            print(f"{TARGETS[target]}: sink-engine continuous, {rate}/s for {seconds:g} s ...", flush=True)
            rows[-1].ages = steady_ours(bench, target, rate, seconds)
    if "iceberg" in targets:
        print(f"{PEERS['iceberg'][0]}: backlog of {records:,} ...", flush=True)
        rows.append(backlog_peer(bench, records))
        if seconds:
            print(f"{PEERS['iceberg'][0]}: {rate}/s for {seconds:g} s ...", flush=True)
            rows[-1].ages = steady_peer(bench, rate, seconds)
    return rows


def print_table(rows: list[Row], rate: int, seconds: float) -> None:
    print()
    print(
        f"Backlog: JSON records of {RECORD_BYTES} bytes, {PARTITIONS} partitions; freshness at {rate:,} records/s for "
        f"{seconds:g} s, rotation or commit every {INTERVAL_MS // 1000} s (the continuous row: sink-engine's "
        "continuous run)"
    )
    print(
        "| target | side | records | seconds | records/s | CPU s per M records | RSS peak MB | files | "
        "freshness p50 s | p99 s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        p50 = p99 = "-"
        if row.ages:
            p50, p99 = (f"{v:.2f}" for v in fresh.percentiles(row.ages)[:2])
        print(
            f"| {row.target} | {row.side} | {row.records:,} | {row.seconds:.1f} | {row.records / row.seconds:,.0f} | "
            f"{row.cpu_s / row.records * 1e6:.1f} | {row.rss_mb:,.0f} | {row.files:,} | {p50} | {p99} |"
        )
    print(
        f"| {TARGETS['s3']} | (no peer: Maven Central serves no S3 sink connector, see docs/performance/peers.md) "
        "| | | | | | | | |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60, help="of the steady scenario (0: none)")
    parser.add_argument("--target", choices=sorted(TARGETS), action="append", help="(default: both)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as folder, LocalStack() as stack:
        stack.apply_env()
        dynamodb = stack.create_store(BUCKET, TABLE)
        bench = Bench(stack, None, dynamodb, Path(folder))
        from sink_engine.run.spark_runner import spark_session, warm_up

        bench.spark = spark_session("sink-engine-bench-peers")
        warm_up(bench.spark, PARTITIONS)
        try:
            rows = run(bench, args.target or sorted(TARGETS, reverse=True), args.records, args.rate, args.seconds)
        finally:
            bench.spark.stop()
    print_table(rows, args.rate, args.seconds)


if __name__ == "__main__":
    main()
