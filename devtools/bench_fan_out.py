"""`make bench-fan-out`: IcebergFormat with fan-out by field (`iceberg.tables.dynamic-enabled`) into 3, 30 and 300
tables, the snapshot commits one table after another (`iceberg.control.commit.threads=1`) and in parallel (the
default, 8): `sink-engine run` on local Spark (a SQL catalog in a temporary SQLite file, the warehouse in the S3
emulator). Each table count has a topic and a catalog of its own; event n goes to table (n // partitions) % tables,
so every partition's range, every task, writes to every table (as a Debezium topic keyed by primary key spreads each
source table over the partitions). A first run creates the tables (one event per table and partition, under a
connector of its own); then a connector committing serially and one committing in parallel each read the whole topic
into those tables. Prints each run's seconds, of them the snapshot commits' (TABLES_COMMITTED: the driver's wall time
from the first table's commit to the last's) and records/s. Usage:
    python -m devtools.bench_fan_out [--tables 3,30,300] [--records 120000] [--partitions 4] [--threads 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from devtools.bench import BUCKET, ICEBERG_IMPORTS, TABLE, EventLog, bench_config
from devtools.producer import create_topic, produce, sample_event
from devtools.stack import LocalStack
from sink_engine.driver.job import run_job

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sink_engine.aws_types import DynamoDBClient

CREATES, WRITES = "creates the tables", "writes the topic"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="3,30,300", help="table counts, comma-separated")
    parser.add_argument("--records", type=int, default=120_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="iceberg.control.commit.threads of the parallel rows")
    args = parser.parse_args()
    args.flush_size = args.records
    rows: list[Row] = []
    with LocalStack() as stack:
        stack.apply_env()
        dynamodb = stack.create_store(BUCKET, TABLE)
        from sink_engine.run.spark_runner import spark_session, warm_up

        spark = spark_session("sink-engine-bench-fan-out")
        warm_up(spark, args.partitions, ICEBERG_IMPORTS)
        for tables in (int(n) for n in args.tables.split(",")):
            topic, catalog = _topic(stack, args, tables), tempfile.mkdtemp(prefix="bench-catalog-")
            bench = Bench(stack, args, dynamodb, spark, topic, catalog, tables)
            rows.append(bench.row(CREATES, args.threads, tables))
            rows += [bench.row(WRITES, threads, args.records) for threads in (1, args.threads)]
        spark.stop()
    _print(args, rows)


@dataclass(frozen=True)
class Row:
    tables: int
    run: str
    threads: int
    seconds: float
    records: int
    commit_s: float


def _topic(stack: LocalStack, args, tables: int) -> str:
    """A topic of `args.records` events, event n routed to table (n // partitions) % tables of namespace `bench`."""
    topic = f"fan-out-{tables}-{time.monotonic_ns()}"
    create_topic(stack.bootstrap_servers, topic, args.partitions)
    values = [
        orjson.dumps({**sample_event(n, padding=95), "__table": f"bench.t{n // args.partitions % tables}"})
        for n in range(args.records)
    ]
    print(f"{tables} tables: producing {args.records:,} events ...", flush=True)
    produce(stack.bootstrap_servers, topic, values, args.partitions)
    return topic


@dataclass
class Bench:
    """The runs of one table count: each a connector of its own over `topic`, writing the tables of `catalog`."""

    stack: LocalStack
    args: argparse.Namespace
    dynamodb: DynamoDBClient
    spark: SparkSession
    topic: str
    catalog: str  # the folder of its SQLite file
    tables: int

    def row(self, run: str, threads: int, per_partition: int) -> Row:
        """A run of at most `per_partition` records of each partition, and its snapshot commits."""
        name = f"fan-out-{self.tables}-{time.monotonic_ns()}"
        config = bench_config(
            self.stack,
            self.args,
            name,
            "topics",
            {
                "topics": self.topic,
                "sink.run.max.records.per.partition": per_partition,
                "format.class": "IcebergFormat",
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "__table",
                "iceberg.control.commit.threads": threads,
                "iceberg.catalog.type": "sql",
                "iceberg.catalog.uri": f"sqlite:///{self.catalog}/catalog.db",
                "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse-{self.tables}",
                "iceberg.tables.auto-create-enabled": "true",
                "iceberg.tables.auto-create-props.write.parquet.compression-codec": "snappy",
            },
        )
        from sink_engine.target.iceberg_tables.catalog import open_catalog
        from sink_engine.target.iceberg_tables.settings import IcebergSettings

        open_catalog(IcebergSettings.from_config(config)).create_namespace_if_not_exists("bench")
        print(f"{self.tables} tables, {threads} commit thread(s): sink-engine run ({run}) ...", flush=True)
        with EventLog("TABLES_COMMITTED") as commits:
            summary = run_job(config, self.spark, self.dynamodb)
        [committed] = commits.events
        assert committed["tables"] == self.tables, committed
        return Row(self.tables, run, threads, summary.seconds, summary.records_written, committed["seconds"])


def _print(args, rows: list[Row]) -> None:
    print(
        f"\n{args.records:,} events of about 220 bytes in {args.partitions} partitions, every partition's records "
        f"spread over every table, IcebergFormat, tasks.max {args.partitions}, local Spark"
    )
    print("| tables | run | commit threads | records | seconds | of them, commits | ms per table | records/s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        rate = "" if row.run == CREATES else f"{row.records / row.seconds:,.0f}"  # a few records per table
        print(
            f"| {row.tables} | {row.run} | {row.threads} | {row.records:,} | {row.seconds:.2f} | {row.commit_s:.2f} | "
            f"{row.commit_s / row.tables * 1000:.0f} | {rate} |"
        )


if __name__ == "__main__":
    main()
