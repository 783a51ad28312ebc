"""Cost of the trigger Lambda: milliseconds per 10,000 MSK records, and dollars per GB at 10 MB/s.

Streams `--records` records of one topic over `--partitions` partitions through the handler, in MSK events of
each batch size as an event source delivers them (AWS's sample tests/events/msk_event.json; values of
`--value-bytes` random bytes, base64 in the event), in-process against moto (`mock_aws`). Two states: `quiet`
(no partition near flush.size: the trigger only bookkeeps) and `busy` (every partition past flush.size while a
run holds the lease: each batch also reads the lease). Per 10,000 records it reports:
- decode: `json.loads` of the event payloads, which the Lambda runtime does before the handler (billed);
- decide: the trigger's pure work (pending.summarize/merge, rules), no AWS;
- own: the handler's time minus the time inside AWS calls (moto's emulation, botocore), i.e. its own Python;
- calls: AWS calls, costed at `--aws-call-ms` each (in-region DynamoDB from Lambda: a few ms);
- billed: decode + own + calls x aws-call-ms; writes/reads: DynamoDB request units; log: bytes to CloudWatch.
Then the cost per GB of Kafka values at 10 MB/s, ARM Lambda of 256 MB (0.0000133334 USD per GB-s, 0.20 USD per
million requests), DynamoDB on demand (0.625 / 0.125 USD per million write / read units, us-east-1), CloudWatch
Logs ingestion (0.50 USD per GB). Usage:
    python -m devtools.trigger_bench [--records 100000] [--partitions 24] [--value-bytes 150] [--aws-call-ms 6]
        [--batches 100,1000,10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import base64
import copy
import functools
import io
import json
import math
import os
import sys
import time
from pathlib import Path

EVENT = Path(__file__).resolve().parents[1] / "tests" / "events" / "msk_event.json"
BATCH_SIZES = (100, 1_000, 10_000)  # the event source's default, this stack's dev setting, its maximum
PAYLOAD_LIMIT = 6 * 1024 * 1024  # synchronous invocation payload
TOPIC, CONNECTOR, TABLE, FLUSH_SIZE = "orders", "orders-s3-sink", "trigger-bench", 10_000
GB_S_USD, REQUEST_USD, MEMORY_GB = 0.0000133334, 0.20 / 1e6, 0.25
WRITE_UNIT_USD, READ_UNIT_USD, LOG_GB_USD = 0.625 / 1e6, 0.125 / 1e6, 0.50
RATE_BYTES_S = 10 * 1000 * 1000


class _Counter(io.TextIOBase):
    """stdout while the bench runs: counts what the handler's logs and metrics would send to CloudWatch Logs."""

    def __init__(self):
        self.chars = 0

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


class _Calls:
    """AWS calls through botocore's event hooks: count, time inside them, DynamoDB request units."""

    def __init__(self, session):
        self.count, self.seconds, self.read_units, self.write_units = 0, 0.0, 0, 0
        session.events.register("before-parameter-build.dynamodb.BatchWriteItem", self._items)
        session.events.register("before-call", self._before)
        session.events.register("after-call", self._after)

    @staticmethod
    def _items(params, context, **_):
        context["bench_items"] = sum(len(v) for v in params.get("RequestItems", {}).values())

    @staticmethod
    def _before(context, **_):
        context["bench_started"] = time.perf_counter()

    def _after(self, model, parsed, context, **_):
        self.count += 1
        self.seconds += time.perf_counter() - context.pop("bench_started")
        if model.name == "BatchWriteItem":
            self.write_units += context.get("bench_items", 0)
        elif model.name in ("PutItem", "UpdateItem"):
            self.write_units += 1
        elif model.name == "Query":  # consistent: one unit per 4 KB read
            self.read_units += max(1, math.ceil(len(json.dumps(parsed.get("Items", []))) / 4096))
        elif model.name == "GetItem":
            self.read_units += 1


def _events(records: int, partitions: int, batch: int, value_bytes: int, first_offset: int) -> list[str]:
    """Payloads of MSK events of `batch` records each, partitions taking turns by slices (as a poller fills a
    batch from several partitions), offsets consecutive per partition from `first_offset`."""
    sample = json.loads(EVENT.read_text())
    template = next(iter(sample["records"].values()))[0]
    per_slice = max(1, batch // partitions)
    offsets, payloads, now = [first_offset] * partitions, [], int(time.time() * 1000)
    produced, partition = 0, 0
    while produced < records:
        grouped: dict[str, list] = {}
        size = min(batch, records - produced)
        while size:
            take = min(per_slice, size)
            for _ in range(take):
                record = copy.copy(template)
                record.update(
                    topic=TOPIC,
                    partition=partition,
                    offset=offsets[partition],
                    timestamp=now,
                    value=base64.b64encode(os.urandom(value_bytes)).decode(),
                )
                grouped.setdefault(f"{TOPIC}-{partition}", []).append(record)
                offsets[partition] += 1
            size, produced, partition = size - take, produced + take, (partition + 1) % partitions
        payloads.append(json.dumps({**sample, "records": grouped}))
    return payloads


INDEX_BUCKET, INDEX_KEY = "lake", "_connectors/_index.json"


def _publish_index(s3) -> None:
    """The connector index the admin would publish, for the bench's one connector."""
    s3.create_bucket(Bucket=INDEX_BUCKET)
    s3.put_object(
        Bucket=INDEX_BUCKET,
        Key=INDEX_KEY,
        Body=json.dumps(
            [
                {
                    "name": CONNECTOR,
                    "topics": [TOPIC],
                    "config_uri": f"s3://{INDEX_BUCKET}/_connectors/{CONNECTOR}.json",
                    "role_arn": "arn:aws:iam::123456789012:role/job",
                    "rotation": {
                        "flush.size": FLUSH_SIZE,
                        "rotate.schedule.interval.ms": 600_000,
                        "rotate.interval.ms": -1,
                        "timestamp.extractor": "wallclock",
                        "timezone": "UTC",
                    },
                }
            ]
        ).encode(),
    )


def _environment(table: str, application: str) -> dict:
    return {
        "TABLE_NAME": table,
        "APPLICATION_ID": application,
        "ENTRY_POINT": "s3://assets/entrypoint.py",
        "SPARK_PARAMETERS": "--conf spark.archives=s3://assets/env.tar.gz#environment",
        "JOB_TIMEOUT_MINUTES": "60",
        "RUN_CLAIM_MS": "900000",
        "BACKOFF_BASE_MS": "60000",
        "BACKOFF_CAP_MS": "3600000",
        "POWERTOOLS_SERVICE_NAME": "sink-trigger",
        "CONNECTORS_URI": f"s3://{INDEX_BUCKET}/{INDEX_KEY}",
    }


def _given(state: str, partitions: int, db) -> int:
    """Commits (and for `busy`, markers past flush.size and a held lease); the first offset to stream."""
    from sink_engine.offsets import layout

    now = int(time.time() * 1000)
    start = FLUSH_SIZE if state == "busy" else 0
    for p in range(partitions):
        db.put_item(
            TableName=TABLE,
            Item={
                **layout.key(CONNECTOR, layout.offset_sk(TOPIC, p)),
                "topic": {"S": TOPIC},
                "partition": {"N": str(p)},
                "next_offset": {"N": "0"},
                "committed_at_ms": {"N": str(now)},
            },
        )
        if state == "busy":
            db.put_item(
                TableName=TABLE,
                Item={
                    **layout.key(CONNECTOR, layout.trigger_sk(TOPIC, p)),
                    "next_offset": {"N": str(start)},
                    "first_offset": {"N": "0"},
                    "first_ts_ms": {"N": str(now)},
                    "newest_ts_ms": {"N": str(now)},
                },
            )
    if state == "busy":
        db.put_item(
            TableName=TABLE,
            Item={
                **layout.key(CONNECTOR, layout.LEASE_SK),
                "owner": {"S": "run"},
                "epoch": {"N": "1"},
                "expires_at_ms": {"N": str(now + 3_600_000)},
            },
        )
    return start


def _decide_only(payloads: list[str], partitions: int, start: int) -> float:
    """Seconds of the trigger's pure work on the decoded events, with markers and commits held in memory."""
    from lambdas.trigger.pending import Committed, Seen, merge, summarize
    from lambdas.trigger.rules import Rotation, closing, worth_saving

    rotation, now = Rotation(FLUSH_SIZE, 600_000), int(time.time() * 1000)
    committed = {(TOPIC, p): Committed(0, now) for p in range(partitions)}
    offsets = {tp: c.next_offset for tp, c in committed.items()}
    markers: dict = {tp: Seen(start, 0, now, now) for tp in committed} if start else {}
    events = [json.loads(p) for p in payloads]
    began = time.perf_counter()
    for event in events:
        seen = {tp: merge(s, None, offsets[tp]) for tp, s in markers.items()}
        batch = {
            tp: merge(seen.get(tp), s, offsets[tp])
            for tp, s in summarize((r for rs in event["records"].values() for r in rs), offsets, {TOPIC}).items()
        }
        markers.update(
            {tp: m for tp, m in batch.items() if worth_saving(rotation, seen.get(tp), m, committed[tp], now)}
        )
        seen.update(batch)
        closing(rotation, (TOPIC,), seen, committed, now)
    return time.perf_counter() - began


def measure(state: str, batch: int, records: int, partitions: int, value_bytes: int, log: _Counter) -> dict:
    """One row: stream `records` through the handler in events of `batch` records, against a fresh moto."""
    import boto3
    from moto import mock_aws

    from lambdas.trigger import handler as trigger
    from sink_engine.offsets import ensure_table

    with mock_aws():
        db = boto3.client("dynamodb")
        ensure_table(db, TABLE)
        application = boto3.client("emr-serverless").create_application(
            name="bench", releaseLabel="emr-7.12.0", type="SPARK"
        )["applicationId"]
        start = _given(state, partitions, db)
        _publish_index(boto3.client("s3"))
        payloads = _events(records, partitions, batch, value_bytes, start)
        boto3.setup_default_session()
        calls = _Calls(boto3.DEFAULT_SESSION)
        service = trigger.build_service(_environment(TABLE, application), lambda: int(time.time() * 1000))
        trigger._service = functools.cache(lambda: service)  # the bench drives the handler with its own environment
        decode = handler = 0.0
        log.chars = 0
        for payload in payloads:
            began = time.perf_counter()
            event = json.loads(payload)
            decoded = time.perf_counter()
            trigger.handler(event, _Context())
            decode, handler = decode + decoded - began, handler + time.perf_counter() - decoded
        decide = _decide_only(payloads, partitions, start)
    scale = 10_000 / records
    return {
        "state": state,
        "batch": batch,
        "events": len(payloads) * scale,
        "payload_mb": max(len(p) for p in payloads) / 1e6,
        "decode_ms": decode * 1000 * scale,
        "decide_ms": decide * 1000 * scale,
        "own_ms": (handler - calls.seconds) * 1000 * scale,
        "moto_ms": calls.seconds * 1000 * scale,
        "calls": calls.count * scale,
        "write_units": calls.write_units * scale,
        "read_units": calls.read_units * scale,
        "log_bytes": log.chars * scale,
    }


def _best(rows: list[dict]) -> dict:
    """The fastest of each time over repeated runs of a row (the machine's other work only adds time)."""
    return {**rows[0], **{key: min(r[key] for r in rows) for key in ("decode_ms", "decide_ms", "own_ms", "moto_ms")}}


class _Context:
    function_name, function_version, memory_limit_in_mb = "trigger-bench", "$LATEST", 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:trigger-bench"
    aws_request_id = "00000000-0000-4000-8000-000000000000"


def cost_per_gb(row: dict, value_bytes: int, call_ms: float) -> dict:
    """USD per GB of Kafka values (and Lambda invocations per second) at 10 MB/s, from a row per 10,000 records."""
    per_gb = 1e9 / value_bytes / 10_000  # units of 10,000 records in a GB
    invocations = row["events"] * per_gb
    billed_ms = row["decode_ms"] + row["own_ms"] + row["calls"] * call_ms
    per_invocation_ms = math.ceil(billed_ms / row["events"])  # Lambda bills each invocation to the ms
    lambda_usd = invocations * (per_invocation_ms / 1000 * MEMORY_GB * GB_S_USD + REQUEST_USD)
    dynamodb_usd = per_gb * (row["write_units"] * WRITE_UNIT_USD + row["read_units"] * READ_UNIT_USD)
    logs_usd = per_gb * row["log_bytes"] / 1e9 * LOG_GB_USD
    return {
        "billed_ms": billed_ms,
        "per_invocation_ms": per_invocation_ms,
        "invocations_s": invocations / (1e9 / RATE_BYTES_S),
        "lambda": lambda_usd,
        "dynamodb": dynamodb_usd,
        "logs": logs_usd,
        "total": lambda_usd + dynamodb_usd + logs_usd,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--value-bytes", type=int, default=150, help="raw value size (base64 in the event: 4/3)")
    parser.add_argument("--aws-call-ms", type=float, default=6.0)
    parser.add_argument("--batches", default=",".join(map(str, BATCH_SIZES)))
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the fastest times are kept")
    args = parser.parse_args()
    for name, value in {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_NAMESPACE": "SinkEngine",
    }.items():
        os.environ[name] = value
    os.environ.pop("AWS_ENDPOINT_URL", None)
    log = _Counter()
    sys.stdout = log  # before the handler's import: Powertools binds its logger to stdout then
    try:
        rows = [
            _best(
                [
                    measure(state, int(batch), args.records, args.partitions, args.value_bytes, log)
                    for _ in range(args.repeat)
                ]
            )
            for state in ("quiet", "busy")
            for batch in args.batches.split(",")
        ]
    finally:
        sys.stdout = sys.__stdout__
    print(
        f"per 10,000 records ({args.value_bytes}-byte values, {args.partitions} partitions; "
        f"AWS calls at {args.aws_call_ms:g} ms each)"
    )
    print(
        "| state | batch | events | event MB | decode ms | decide ms | own ms | moto ms | calls | billed ms "
        "| write units | read units | log KB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    costs = []
    for row in rows:
        cost = cost_per_gb(row, args.value_bytes, args.aws_call_ms)
        costs.append(cost)
        print(
            f"| {row['state']} | {row['batch']:,} | {row['events']:g} | {row['payload_mb']:.2f} "
            f"| {row['decode_ms']:.1f} | {row['decide_ms']:.1f} | {row['own_ms']:.1f} | {row['moto_ms']:.1f} "
            f"| {row['calls']:g} | {cost['billed_ms']:.1f} | {row['write_units']:g} | {row['read_units']:g} "
            f"| {row['log_bytes'] / 1000:.1f} |"
        )
    print(f"\nUSD per GB of values at 10 MB/s ({1e9 / args.value_bytes / 1e6:.2f} M records per GB)")
    print("| state | batch | invocations/s | ms per invocation | Lambda | DynamoDB | Logs | total |")
    print("|---|---|---|---|---|---|---|---|")
    for row, cost in zip(rows, costs):
        print(
            f"| {row['state']} | {row['batch']:,} | {cost['invocations_s']:.1f} | {cost['per_invocation_ms']} "
            f"| {cost['lambda']:.6f} | {cost['dynamodb']:.6f} | {cost['logs']:.6f} | {cost['total']:.6f} |"
        )
    for row in rows:
        if row["payload_mb"] * 1e6 > PAYLOAD_LIMIT:
            print(
                f"note: {row['batch']}-record events of {row['payload_mb']:.1f} MB pass the 6 MB payload limit; "
                "the event source would deliver fewer records per event"
            )


if __name__ == "__main__":
    main()
