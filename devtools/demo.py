"""`make demo`: the sink end to end on the embedded local stack, with nothing to install but the venv (which holds
Apache Kafka's jars: devtools/kafka_dist.py).

Starts an Apache Kafka broker and moto's S3/DynamoDB on free loopback ports, produces click events to a
3-partition topic, runs the sink job on local Spark through its CLI, shows what landed and the offsets,
runs again to show that nothing is written twice, and stops everything it started (also on Ctrl-C).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import boto3

from devtools.producer import create_topic, produce_events
from devtools.stack import LocalStack
from sink_engine import cli

TOPIC, BUCKET, PARTITIONS = "clickstream", "demo-lake", 3


def connector_config(stack: LocalStack) -> dict:
    return {
        "name": "clickstream-to-s3",
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": TOPIC,
            "tasks.max": "3",
            "bootstrap.servers": stack.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "s3.region": "us-east-1",
            "topics.dir": "topics",
            "flush.size": "1000",
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "offset.storage.dynamodb.table": "demo-sink-offsets",
        },
    }


def step(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def show_objects(s3) -> int:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="topics/")
    objects = [o for page in pages for o in page.get("Contents", [])]
    print(f"{'key':<62} {'records':>8} {'bytes':>9}")
    for o in sorted(objects, key=lambda o: o["Key"]):
        records = s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read().count(b"\n")
        print(f"{o['Key']:<62} {records:>8} {o['Size']:>9}")
    print(f"{len(objects)} objects")
    return len(objects)


def cli_step(*args: str) -> None:
    code = cli.main(list(args))
    if code != 0:
        raise SystemExit(f"sink-engine {args[0]} failed with exit code {code}")


def produce_step(stack: LocalStack, count: int, first_id: int) -> None:
    def progress(done, total):
        print(f"    produced {done:,}/{total:,}", flush=True)

    produce_events(stack.bootstrap_servers, TOPIC, count, PARTITIONS, first_id=first_id, progress=progress)
    print(f"    produced {count:,} events", flush=True)


def main() -> int:
    step("starting the local stack (Apache Kafka broker, moto server for S3 and DynamoDB)")
    with LocalStack() as stack, tempfile.TemporaryDirectory() as work:
        stack.apply_env()
        print(f"    Kafka at {stack.bootstrap_servers}, AWS endpoint {stack.aws_endpoint}")
        config_file = Path(work) / "connector.json"
        config_file.write_text(json.dumps(connector_config(stack), indent=2))
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        create_topic(stack.bootstrap_servers, TOPIC, PARTITIONS)

        step(f"producing 10,000 click events to '{TOPIC}' ({PARTITIONS} partitions)")
        produce_step(stack, 10_000, 0)
        step("sink-engine init (creates the offsets table, checks the bucket)")
        cli_step("init", "--config", str(config_file))
        step("sink-engine run (local Spark; the first start takes a few seconds)")
        started = time.monotonic()
        cli_step("run", "--config", str(config_file))
        print(f"    ({time.monotonic() - started:.1f}s including Spark start-up)")
        step("objects in s3://demo-lake/topics/ (flush.size=1000; the tail of each partition waits)")
        first = show_objects(s3)
        step("sink-engine status")
        cli_step("status", "--config", str(config_file))
        step("running again with no new data: nothing is written twice")
        cli_step("run", "--config", str(config_file))
        again = show_objects(s3)
        print(f"    objects before: {first}, after: {again}")
        step("2,000 more events, then another run: the sequence continues where it stopped")
        produce_step(stack, 2_000, 10_000)
        cli_step("run", "--config", str(config_file))
        cli_step("status", "--config", str(config_file))
        step("stopping the local stack")
    print("done")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\ninterrupted; the local stack was stopped", file=sys.stderr)
        sys.exit(130)
