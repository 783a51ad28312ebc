"""`make bench-many`: one continuous job serving 1, 12 and 50 connectors (issue 38), each of 4 partitions, at one
total rate split evenly over the connectors, on local Spark. Prints a table. Usage:
    python -m devtools.bench_many [--connectors 1,12,50] [--rate 5000] [--seconds 60]

Each scenario runs `run_connectors` (sink_engine/continuous/driver.py) in a thread of this process on a local Spark
session started once (its task slots: Spark's default parallelism here, so the job's tasks are as many whatever the
connector count), JsonFormat output of JSON values of about 220 bytes, `rotate.schedule.interval.ms` 5000, while a
producer thread per connector produces `--rate / N` records/s to its topic for `--seconds`. Freshness of a record:
from when it was handed to its producer to the first listing of the bucket (every LIST_EVERY_S, one listing for
every connector) that shows the object holding it (as devtools/bench_freshness.py measures it). CPU per record: this
process tree (driver, Spark's JVM and Python workers, the producers) less the broker and the S3 emulator, over the
produce time and the catch-up, per record produced (the targets: p99 freshness at most 10 s, CPU per record at most
1.1x one connector's), and the part of it in Spark's JVM and Python workers (the tasks), without this process's own
(the driver, the producers, the lister). RSS: the tree's, sampled every 10 s while records are produced; the first
and last sample (the target: flat over 10 minutes, `--seconds 600`).
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import defaultdict
from contextlib import ExitStack

import boto3
import psutil

from devtools.bench_freshness import BUCKET, PARTITIONS, TABLE, caught_up, connector, event_value, percentiles, rss_mb
from devtools.process_cpu import TreeCpu
from devtools.producer import SteadyProducer, create_topic
from devtools.stack import LocalStack
from sink_engine.continuous.driver import ContinuousOutcome, run_connectors

LIST_EVERY_S = 0.5


class BucketLister:
    """Lists the bucket's `topics/` every LIST_EVERY_S from a thread: (topic, partition, first offset) -> ms first
    seen."""

    def __init__(self) -> None:
        self._s3 = boto3.client("s3")
        self.seen: dict[tuple[str, int, int], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> BucketLister:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(LIST_EVERY_S):
            now = int(time.time() * 1000)
            pages = self._s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="topics/")
            for item in (item for page in pages for item in page.get("Contents", [])):
                topic, number, first = item["Key"].rsplit("/", 1)[1].rsplit(".", 1)[0].rsplit("+", 2)
                self.seen.setdefault((topic, int(number), int(first)), now)


def ages(lister: BucketLister, topic: str, producer: SteadyProducer) -> list[int]:
    """Each landed record's ms from its produce to the first listing that showed its object."""
    files: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (name, partition, first), seen_ms in lister.seen.items():
        if name == topic:
            files[partition].append((first, seen_ms))
    found = []
    for partition, starts in files.items():
        starts.sort()
        position, ids = 0, producer.produced[partition]
        for offset, n in enumerate(ids):
            while position + 1 < len(starts) and starts[position + 1][0] <= offset:
                position += 1
            found.append(starts[position][1] - producer.produce_ms[n])
    return found


def scenario(stack: LocalStack, spark, dynamodb, count: int, rate: int, seconds: float, cpu: TreeCpu) -> dict:
    configs = [connector(stack, f"many-{count}-{n}", 1_000_000) for n in range(count)]
    for config in configs:
        create_topic(stack.bootstrap_servers, config.name, PARTITIONS)
    stop, outcomes = threading.Event(), []
    job = threading.Thread(
        target=lambda: outcomes.extend(run_connectors(configs, spark, lambda _: dynamodb, stop)), daemon=True
    )
    job.start()
    time.sleep(5 + count * 0.2)  # the leases taken, the tasks' consumers assigned
    rss, before, own_before = [rss_mb()], cpu.sample(), _own_cpu()
    with BucketLister() as lister, ExitStack() as producing:
        producers = [
            producing.enter_context(
                SteadyProducer(stack.bootstrap_servers, c.name, list(range(PARTITIONS)), rate // count, event_value)
            )
            for c in configs
        ]
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            time.sleep(min(10.0, seconds - (time.monotonic() - started)))
            rss.append(rss_mb())
        for producer in producers:
            producer.stop()
        _wait(lambda: all(caught_up(dynamodb, c, p.produced) for c, p in zip(configs, producers)), 120)
        spent, own = sum(TreeCpu.spent(before, cpu.sample()).values()), _own_cpu() - own_before
        time.sleep(2 * LIST_EVERY_S)
    stop.set()
    job.join(120)
    _check(outcomes)
    records = sum(p.count for p in producers)
    found = [age for c, p in zip(configs, producers) for age in ages(lister, c.name, p)]
    return {
        "records": records,
        "ages": found,
        "cpu_us": spent / records * 1e6,
        "job_us": (spent - own) / records * 1e6,
        "rss": (rss[0], rss[-1]),
    }


def _own_cpu() -> float:
    """CPU seconds of this process alone: the driver, the producers, the lister (the rest of the tree is Spark's JVM
    and its Python workers, which run the tasks)."""
    times = psutil.Process().cpu_times()
    return times.user + times.system


def _wait(condition, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not caught up within {timeout_s:g}s")
        time.sleep(0.5)


def _check(outcomes: list[ContinuousOutcome]) -> None:
    failed = [f"{o.connector}: {o.error}" for o in outcomes if o.error is not None]
    if failed or not outcomes:
        raise RuntimeError(f"connectors failed: {failed or 'the job did not end'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connectors", default="1,12,50", help="connector counts, one scenario each")
    parser.add_argument("--rate", type=int, default=5000, help="records/s in all, split over the connectors")
    parser.add_argument("--seconds", type=float, default=60, help="how long each scenario produces")
    args = parser.parse_args()
    counts = [int(n) for n in args.connectors.split(",")]
    rows = {}
    with LocalStack() as stack:
        stack.apply_env()
        cpu = TreeCpu.without_children_so_far()
        dynamodb = stack.create_store(BUCKET, TABLE)
        from sink_engine.run.spark_runner import spark_session, warm_up

        spark = spark_session("sink-engine-bench-many")
        warm_up(spark, PARTITIONS)
        slots = spark.sparkContext.defaultParallelism
        for count in counts:
            print(f"{count} connectors: {args.rate} records/s in all for {args.seconds:g} s ...", flush=True)
            rows[count] = scenario(stack, spark, dynamodb, count, args.rate, args.seconds, cpu)
        spark.stop()
    print()
    print(
        f"One continuous job, connectors of {PARTITIONS} partitions, {args.rate} records/s in all for "
        f"{args.seconds:g} s, rotate.schedule.interval.ms 5000, {slots} task slots"
    )
    print(
        "| connectors | records | p50 s | p99 s | max s | CPU µs/record | vs 1 connector | of which Spark's JVM and "
        "workers | RSS first / last MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    base = rows[counts[0]]["cpu_us"]
    for count, row in rows.items():
        p50, p99, top = percentiles(row["ages"])
        first, last = row["rss"]
        print(
            f"| {count} | {row['records']:,} | {p50:.2f} | {p99:.2f} | {top:.2f} | {row['cpu_us']:.1f} | "
            f"{row['cpu_us'] / base:.2f}x | {row['job_us']:.1f} | {first:,.0f} / {last:,.0f} |"
        )
    print("targets: p99 at most 10 s; CPU per record at most 1.1x one connector's; RSS flat over 10 minutes")


if __name__ == "__main__":
    main()
