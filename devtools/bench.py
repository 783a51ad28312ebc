"""`make bench`: throughput of Kafka -> JSON objects in S3 with offsets committed, on local Spark,
beside a single-process baseline (consume, convert, encode, put; no Spark, no commit) in the same run.

Prints a table. Spark start-up is measured apart from the run. Usage:
    python -m devtools.bench [--records 1000000] [--partitions 4] [--flush-size 50000]
"""
from __future__ import annotations

import argparse
import time

import boto3

from devtools.producer import create_topic, produce_events
from devtools.stack import LocalStack
from sink_engine.config import parse_config
from sink_engine.job import plan, run_job
from sink_engine.offsets import OffsetStore, ensure_table
from sink_engine.task import run_range

BUCKET, TABLE, TOPIC = "bench-lake", "bench-offsets", "bench-events"


# Output formats measured one by one (single process, same input): name -> connector keys.
FORMAT_MATRIX = {
    "json": {}, "json/gzip": {"s3.compression.type": "gzip"},
    **{f"parquet/{c}": {"format.class": "ParquetFormat", "parquet.codec": c}
       for c in ("snappy", "none", "gzip", "lz4", "zstd", "brotli")},
    **{f"avro/{c}": {"format.class": "AvroFormat", "avro.codec": c}
       for c in ("null", "deflate", "snappy", "bzip2", "zstandard", "xz")},
    "bytearray": {"format.class": "ByteArrayFormat"}, "blockgzip": {"format.class": "BlockGzipFormat"},
}
# Partitioners measured the same way (JSON output): name -> connector keys. Events are 1 s apart.
PARTITIONER_MATRIX = {
    "field/region": {"partitioner.class": "FieldPartitioner", "partition.field.name": "region"},
    "field/user_id": {"partitioner.class": "FieldPartitioner", "partition.field.name": "user_id"},
    "hourly/recordfield": {"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "RecordField"},
    "time-15min-paris/record": {"partitioner.class": "TimeBasedPartitioner", "timezone": "Europe/Paris",
                                "path.format": "'dt'=yyyy-MM-dd/'t'=HHmm", "partition.duration.ms": 900_000,
                                "timestamp.extractor": "Record"},
    "field+daily/recordfield": {"partitioner.class": "FieldAndTimeBasedPartitioner", "partition.field.name": "region",
                                "path.format": "'year'=YYYY/'month'=MM/'day'=dd", "partition.duration.ms": 86_400_000,
                                "timestamp.extractor": "RecordField"},
}


def bench_config(stack: LocalStack, args, name: str, topics_dir: str, overrides: dict | None = None):
    return parse_config({"name": name, "config": {
        "topics": TOPIC, "bootstrap.servers": stack.bootstrap_servers, "s3.bucket.name": BUCKET,
        "s3.region": "us-east-1", "topics.dir": topics_dir, "flush.size": args.flush_size,
        "format.class": "JsonFormat", "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false", "offset.storage.dynamodb.table": TABLE,
        "tasks.max": args.partitions, "sink.run.max.records.per.partition": args.records, **(overrides or {}),
    }})


def baseline(config, dynamodb) -> tuple[float, int, int]:
    """The same per-range work, one range after another in this process: seconds, records, output bytes."""
    started = time.perf_counter()
    ranges = plan(config, OffsetStore(dynamodb, TABLE, lambda: 0))
    s3 = boto3.client("s3")
    results = [run_range(config, r, client=s3) for r in ranges]
    failed = [r.error for r in results if r.error]
    if failed:
        raise RuntimeError(f"baseline failed: {failed}")
    files = [f for r in results for f in r.files]
    return time.perf_counter() - started, sum(f.record_count for f in files), sum(f.size_bytes for f in files)


def format_rows(stack: LocalStack, args, dynamodb, total_mb: float, what: str = "format") -> list[str]:
    """One single-process row per entry of FORMAT_MATRIX in `--formats` (what="format") or of
    PARTITIONER_MATRIX in `--partitioners` (what="partitioner"), on the same input."""
    matrix, selected = (FORMAT_MATRIX, args.formats) if what == "format" else (PARTITIONER_MATRIX, args.partitioners)
    rows = []
    for name in [n for n in matrix if selected == "all" or n in selected.split(",")]:
        _empty_bucket()
        print(f"{what} {name}: one process, no Spark ...", flush=True)
        slug = "".join(c if c.isalnum() else "-" for c in name)
        config = bench_config(stack, args, f"{what}-{slug}", f"{what}s", matrix[name])
        cpu_started = time.process_time()
        seconds, records, output = baseline(config, dynamodb)
        cpu = time.process_time() - cpu_started
        rows.append(f"{row(name, seconds, records, total_mb)} {output / 1e6:>9.1f} | {records / cpu:>11,.0f} |")
    return rows


def row(name: str, seconds: float, records: int, mbytes: float) -> str:
    return f"| {name:<44} | {seconds:>8.2f} | {records:>10,} | {records / seconds:>12,.0f} | {mbytes / seconds:>7.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--flush-size", type=int, default=50_000)
    parser.add_argument("--formats", default="all",
                        help="comma-separated names from FORMAT_MATRIX to measure, 'all' or 'none'")
    parser.add_argument("--partitioners", default="all",
                        help="comma-separated names from PARTITIONER_MATRIX to measure, 'all' or 'none'")
    args = parser.parse_args()
    with LocalStack() as stack:
        stack.apply_env()
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        dynamodb = boto3.client("dynamodb")
        ensure_table(dynamodb, TABLE)
        create_topic(stack.bootstrap_servers, TOPIC, args.partitions)
        print(f"producing {args.records:,} events of about 200 bytes to {args.partitions} partitions ...",
              flush=True)
        produce_events(stack.bootstrap_servers, TOPIC, args.records, args.partitions, padding=95)
        probe = bench_config(stack, args, "probe", "probe")
        total_mb = _input_megabytes(probe, dynamodb)

        print("baseline: one process, no Spark ...", flush=True)
        base_s, base_records, _ = baseline(bench_config(stack, args, "baseline", "baseline"), dynamodb)
        formats = format_rows(stack, args, dynamodb, total_mb)
        partitioners = format_rows(stack, args, dynamodb, total_mb, "partitioner")

        _empty_bucket()
        print("starting Spark ...", flush=True)
        started = time.perf_counter()
        from sink_engine.spark_runner import spark_session, warm_up

        spark = spark_session("sink-engine-bench")
        warm_up(spark, args.partitions)
        startup_s = time.perf_counter() - started
        print("Spark run: lease, plan, tasks, commit ...", flush=True)
        summary = run_job(bench_config(stack, args, "spark", "topics"), spark, dynamodb)
        spark.stop()

    print()
    print(f"{args.records:,} records in {args.partitions} partitions, {total_mb:.0f} MB of values, "
          f"flush.size {args.flush_size:,}, {_cores()} cores")
    print("| step                                         |  seconds |    records |    records/s |    MB/s |")
    print("|----------------------------------------------|----------|------------|--------------|---------|")
    print(row("baseline: consume, convert, encode, put (1 proc)", base_s, base_records, total_mb))
    print(row("Spark run: Kafka to S3 JSON, offsets committed", summary.seconds, summary.records_written, total_mb))
    print(f"| {'Spark start-up: session, Python workers':<44} | {startup_s:>8.2f} | {'':>10} | {'':>12} | {'':>7} |")
    print(f"\nSpark run / baseline throughput: {base_s / summary.seconds:.2f}x (target 1.3x)")
    if formats:
        print("\nOutput formats, single process (consume, convert, encode, put; MB/s of input values; the last "
              "column counts this process's CPU time only, not the broker's or the S3 emulator's)")
        print(f"| {'format':<44} |  seconds |    records |    records/s |    MB/s | output MB | rec/CPU s   |")
        print(f"|{'-' * 46}|----------|------------|--------------|---------|-----------|-------------|")
        print("\n".join(formats))
    if partitioners:
        print("\nPartitioners, single process, JSON output (consume, convert, partition, encode, put)")
        print(f"| {'partitioner':<44} |  seconds |    records |    records/s |    MB/s | output MB | rec/CPU s   |")
        print(f"|{'-' * 46}|----------|------------|--------------|---------|-----------|-------------|")
        print("\n".join(partitioners))


def _input_megabytes(config, dynamodb) -> float:
    """Size of the records' values, from the broker's own accounting of a full read."""
    from sink_engine.source.reader import read_range

    total = 0
    for planned in plan(config, OffsetStore(dynamodb, TABLE, lambda: 0)):
        for chunk in read_range(config, planned):
            total += sum(len(v) for v in chunk.values)
    return total / 1e6


def _empty_bucket() -> None:
    """Delete what a step wrote, so that every step starts with the same (empty) S3 emulator."""
    s3 = boto3.client("s3")
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            s3.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})


def _cores() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
