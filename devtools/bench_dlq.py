"""Cost of bad records: the single-process range work (consume, convert, encode, put, dead letters) on clean
input beside inputs with a share of malformed JSON values, dead-lettered to S3 or to a Kafka topic.

Prints a table. Usage:
    python -m devtools.bench_dlq [--records 200000] [--partitions 2] [--bad-shares 0.001,0.01,0.1]
"""

from __future__ import annotations

import argparse
import time

import boto3
import orjson

from devtools.bench import row
from devtools.producer import create_topic, produce, sample_event
from devtools.stack import LocalStack
from sink_engine.config import parse_config
from sink_engine.driver.session import plan
from sink_engine.offsets import OffsetStore
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task.settings import TaskSettings

BUCKET, TABLE = "bench-dlq-lake", "bench-dlq-offsets"


def values(count: int, bad_share: float) -> list[bytes]:
    """JSON events of about 200 bytes; every 1/bad_share-th one cut short (malformed)."""
    every = round(1 / bad_share) if bad_share else 0
    out = []
    for i in range(count):
        value = orjson.dumps(sample_event(i, padding=95))
        out.append(value[:-2] if every and i % every == every - 1 else value)
    return out


def measure(config, dynamodb) -> tuple[float, int, int]:
    """Seconds, records read and records dead-lettered, for every planned range in this process."""
    started = time.perf_counter()
    s3 = boto3.client("s3")
    settings = TaskSettings.from_config(config)
    results = [run_range(settings, r, client=s3) for r in plan(config, OffsetStore(dynamodb, TABLE, lambda: 0))[0]]
    if any(r.error for r in results):
        raise RuntimeError(f"range failed: {[r.error for r in results if r.error]}")
    read = sum(r.records_read for r in results)
    return time.perf_counter() - started, read, sum(sum(r.dead_letters.values()) for r in results)


def config_for(stack, topic: str, name: str, args, destination: dict):
    return parse_config(
        {
            "name": name,
            "config": {
                "topics": topic,
                "bootstrap.servers": stack.bootstrap_servers,
                "s3.bucket.name": BUCKET,
                "s3.region": "us-east-1",
                "flush.size": args.flush_size,
                "format.class": "JsonFormat",
                "value.converter.schemas.enable": "false",
                "offset.storage.dynamodb.table": TABLE,
                "sink.run.max.records.per.partition": args.records,
                "errors.tolerance": "all",
                **destination,
            },
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--flush-size", type=int, default=10_000)
    parser.add_argument("--bad-shares", default="0.001,0.01,0.1")
    args = parser.parse_args()
    shares = [0.0] + [float(s) for s in args.bad_shares.split(",")]
    rows = []
    with LocalStack() as stack:
        stack.apply_env()
        dynamodb = stack.create_store(BUCKET, TABLE)
        for share in shares:
            topic = f"bench-dlq-{share:g}".replace(".", "_")
            create_topic(stack.bootstrap_servers, topic, args.partitions)
            produce(stack.bootstrap_servers, topic, values(args.records, share), args.partitions)
            mb = args.records * 200 / 1e6
            for label, destination in (
                ("s3", {"errors.deadletterqueue.s3.prefix": "dlq"}),
                (
                    "topic",
                    {
                        "errors.deadletterqueue.topic.name": f"{topic}-dlq",
                        "errors.deadletterqueue.topic.replication.factor": 1,
                    },
                ),
            ):
                if share == 0 and label == "topic":
                    continue
                print(f"{share:.1%} bad, dead letters to {label} ...", flush=True)
                seconds, read, dead = measure(config_for(stack, topic, f"{topic}-{label}", args, destination), dynamodb)
                rows.append(f"{row(f'{share:.1%} bad -> {label}: {dead:,} dead letters', seconds, read, mb)}")
    print(f"\n{args.records:,} records in {args.partitions} partitions, flush.size {args.flush_size:,}, one process")
    print("| input                                        |  seconds |       read |    records/s |    MB/s |")
    print("|----------------------------------------------|----------|------------|--------------|---------|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
