"""`make bench-restore`: `sink-engine restore` of an EnvelopeFormat backup (Parquet, then JSON) made by
`sink-engine run` on local Spark, into a new topic; then the same restore again (everything present: what a rerun
costs).

Records: keys, 200-byte values, two headers each; the backup's values through ByteArrayConverter (one file stream
per partition, so a rerun leaves out the objects wholly present). Rows: seconds, records/s, CPU µs per record of
this process tree (the restore runs in this process: Python and librdkafka's threads; the broker and the S3
emulator are not counted), and the target records the restore scanned. Usage:
    python -m devtools.bench_restore [--records 1000000] [--partitions 4] [--flush-size 50000]
                                     [--encodings parquet,json]
"""

from __future__ import annotations

import argparse
import time

import boto3
from confluent_kafka import Producer

from devtools.process_cpu import TreeCpu
from devtools.producer import create_topic
from devtools.stack import LocalStack
from sink_engine.config import parse_config
from sink_engine.driver.job import run_job
from sink_engine.restore import RestoreRequest, restore

BUCKET, TABLE, TOPIC = "bench-restore-lake", "bench-restore-offsets", "bench-restore-source"
ENCODINGS = {"parquet": {"parquet.codec": "zstd"}, "json": {"s3.compression.type": "gzip"}}


def produce_source(bootstrap: str, count: int, partitions: int) -> None:
    """`count` records round-robin over the partitions: a key, a 200-byte value, two headers."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "compression.type": "none",
        }
    )
    for i in range(count):
        value = f'{{"id":{i:>10},"pad":"'.encode() + b"x" * 178 + b'"}'
        while True:
            try:
                producer.produce(
                    TOPIC,
                    value=value,
                    key=f"key-{i % 10_007}".encode(),
                    partition=i % partitions,
                    headers=[("trace", f"{i:016x}".encode()), ("kind", b"order")],
                )
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0


def connector(stack, args, encoding: str):
    return parse_config(
        {
            "name": f"backup-{encoding}",
            "config": {
                "topics": TOPIC,
                "bootstrap.servers": stack.bootstrap_servers,
                "s3.bucket.name": BUCKET,
                "s3.region": "us-east-1",
                "topics.dir": f"backup-{encoding}",
                "flush.size": args.flush_size,
                "format.class": "EnvelopeFormat",
                "format.envelope.encoding": encoding,
                **ENCODINGS[encoding],
                "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                "offset.storage.dynamodb.table": TABLE,
                "tasks.max": args.partitions,
            },
        }
    )


def restore_row(config, dynamodb, cpu: TreeCpu, name: str, target: str) -> str:
    before = cpu.sample()
    summary = restore(RestoreRequest(config, TOPIC, target, create_target=True), dynamodb, boto3.client("s3"))
    spent = sum(TreeCpu.spent(before, cpu.sample()).values())
    read = sum(c.read for c in summary.counts.values())
    produced = sum(c.produced for c in summary.counts.values())
    return (
        f"| {name:<28} | {summary.seconds:>8.2f} | {read:>10,} | {produced:>10,} "
        f"| {read / summary.seconds:>10,.0f} | {spent / read * 1e6:>8.2f} | {summary.scanned:>10,} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--flush-size", type=int, default=50_000)
    parser.add_argument("--encodings", default="parquet,json")
    args = parser.parse_args()
    encodings = args.encodings.split(",")
    rows = []
    with LocalStack() as stack:
        stack.apply_env()
        cpu = TreeCpu.without_children_so_far()  # the broker and moto left out
        dynamodb = stack.create_store(BUCKET, TABLE)
        create_topic(stack.bootstrap_servers, TOPIC, args.partitions)
        print(f"producing {args.records:,} records to {args.partitions} partitions ...", flush=True)
        produce_source(stack.bootstrap_servers, args.records, args.partitions)
        from sink_engine.run.spark_runner import spark_session

        spark = spark_session("sink-engine-bench-restore")
        configs = {}
        for encoding in encodings:
            print(f"backing up with EnvelopeFormat/{encoding} (sink-engine run) ...", flush=True)
            configs[encoding] = connector(stack, args, encoding)
            run_job(configs[encoding], spark, dynamodb)
        spark.stop()
        for encoding in encodings:
            target = f"restored-{encoding}"
            print(f"restoring {encoding} into {target}, then again ...", flush=True)
            rows.append(restore_row(configs[encoding], dynamodb, cpu, f"{encoding}", target))
            rows.append(restore_row(configs[encoding], dynamodb, cpu, f"{encoding} rerun (all present)", target))
    print(
        f"\n{args.records:,} records in {args.partitions} partitions (key, 200-byte value, two headers), "
        f"flush.size {args.flush_size:,}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print("| restore                      |  seconds |       read |   produced |  records/s |   CPU µs |    scanned |")
    print("|------------------------------|----------|------------|------------|------------|----------|------------|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
