"""`make bench-fan-out`: IcebergFormat with fan-out by field (`iceberg.tables.dynamic-enabled`) against one table,
on the same events: `sink-engine run` on local Spark (SQL catalog in a temporary SQLite file, the warehouse in the
S3 emulator), each on its own topic of the same records. Rows: every record to one table (the route field is a
column like any other); to three tables in blocks of 1,000 records (a Debezium topic of a few source tables); to
three tables record by record (the worst interleaving). Prints seconds (and those of the snapshot commits),
records/s and CPU per record of the engine's process tree. Usage:
    python -m devtools.bench_fan_out [--records 400000] [--partitions 4]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import orjson

from devtools.bench import BUCKET, ICEBERG_IMPORTS, TABLE, EventLog, RunRow, bench_config
from devtools.process_cpu import TreeCpu
from devtools.producer import create_topic, produce, sample_event
from devtools.stack import LocalStack
from sink_engine.driver.job import run_job

NAMESPACE = "bench"
LAYOUTS = {  # name -> (route field value of event n); "one table" routes every record to bench.events
    "one table": lambda n: "bench.events",
    "3 tables, blocks of 1,000": lambda n: f"bench.t{n // 1000 % 3}",
    "3 tables, record by record": lambda n: f"bench.t{n % 3}",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    args.flush_size = args.records
    rows = []
    with LocalStack() as stack:
        stack.apply_env()
        cpu = TreeCpu.without_children_so_far()
        dynamodb = stack.create_store(BUCKET, TABLE)
        from sink_engine.run.spark_runner import spark_session, warm_up

        spark = spark_session("sink-engine-bench-fan-out")
        warm_up(spark, args.partitions, ICEBERG_IMPORTS)
        for name, table_of in LAYOUTS.items():
            rows.append(_row(stack, args, dynamodb, spark, cpu, name, table_of))
        spark.stop()
    print(
        f"\n{args.records:,} events of about 220 bytes in {args.partitions} partitions, IcebergFormat, tasks.max "
        f"{args.partitions}, local Spark"
    )
    print(f"| {'layout':<26} | seconds | of them, commits |  records/s | CPU µs/rec | vs one table |")
    print(f"|{'-' * 28}|---------|------------------|------------|------------|--------------|")
    for row, commit_s in rows:
        ratio = row.records_per_s / rows[0][0].records_per_s
        print(
            f"| {row.format:<26} | {row.seconds:>7.2f} | {commit_s:>16.2f} | {row.records_per_s:>10,.0f} | "
            f"{row.cpu_us:>10.2f} | {ratio:>11.2f}x |"
        )


def _row(stack, args, dynamodb, spark, cpu: TreeCpu, name: str, table_of) -> tuple[RunRow, float]:
    """The layout's run, and the seconds of its snapshot commits (SNAPSHOT_COMMITTED), one per table."""
    topic = f"fan-out-{len(name)}-{time.monotonic_ns()}"
    create_topic(stack.bootstrap_servers, topic, args.partitions)
    values = [orjson.dumps({**sample_event(n, padding=95), "__table": table_of(n)}) for n in range(args.records)]
    print(f"{name}: producing {args.records:,} events ...", flush=True)
    produce(stack.bootstrap_servers, topic, values, args.partitions)
    catalog_dir = tempfile.mkdtemp(prefix="bench-catalog-")
    config = bench_config(
        stack,
        args,
        f"fan-out-{len(name)}",
        "topics",
        {
            "topics": topic,
            "format.class": "IcebergFormat",
            "iceberg.tables.dynamic-enabled": "true",
            "iceberg.tables.route-field": "__table",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": f"sqlite:///{catalog_dir}/catalog.db",
            "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse-{len(name)}",
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.tables.auto-create-props.write.parquet.compression-codec": "snappy",
        },
    )
    from sink_engine.target.iceberg_tables.catalog import open_catalog
    from sink_engine.target.iceberg_tables.settings import IcebergSettings

    open_catalog(IcebergSettings.from_config(config)).create_namespace_if_not_exists(NAMESPACE)
    before, commits = cpu.sample(), EventLog("SNAPSHOT_COMMITTED")
    with commits:
        summary = run_job(config, spark, dynamodb)
    assert summary.records_written == args.records, summary
    row = RunRow(name, "sink-engine run", summary.seconds, summary.records_written, TreeCpu.spent(before, cpu.sample()))
    return row, sum(event["seconds"] for event in commits.events)


if __name__ == "__main__":
    main()
