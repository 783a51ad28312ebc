"""The engine's side of the IAM tests: the records the connector reads, and the CLI run in-process (the driver in
this process, its Spark tasks in the session's workers) with its exit code and output."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from devtools.producer import create_topic, produce
from sink_engine import cli

PARTITIONS = {"orders": 2, "payments": 1}  # the connector's topics (the dev environment's msk.topics)
BAD_VALUES = (b"{not json", b"[1, 2")  # dead-lettered by the JsonConverter, to orders partition 0


@dataclass(frozen=True)
class Workload:
    good: dict[str, int]  # topic -> good records produced
    bad: int  # bad records on orders partition 0


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


def produce_workload(bootstrap: str, good_per_partition: int = 10) -> Workload:
    """Create the topics and produce good JSON records on every partition, and BAD_VALUES on orders-0."""
    for topic, partitions in PARTITIONS.items():
        create_topic(bootstrap, topic, partitions)
    for topic, partitions in PARTITIONS.items():
        values = [json.dumps({"topic": topic, "n": n}).encode() for n in range(good_per_partition * partitions)]
        produce(bootstrap, topic, values, partitions)
    produce(bootstrap, "orders", list(BAD_VALUES), 1)
    return Workload({t: good_per_partition * p for t, p in PARTITIONS.items()}, len(BAD_VALUES))


def run_cli(*argv: str) -> CliResult:
    """`sink-engine <argv>` in this process; an exception the CLI lets through is reported as exit code -1."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except Exception as e:  # noqa: BLE001 (the test shows what escaped the CLI)
            print(f"{type(e).__name__}: {e}", file=err)
            code = -1
    return CliResult(code, out.getvalue(), err.getvalue())


@dataclass(frozen=True)
class Landed:
    """What a run left, read by the admin right after it: data objects (key -> tags), dead-letter objects, and
    the connector's items in the offsets table (sort key -> item)."""

    objects: dict[str, dict[str, str]]
    dead_letters: list[str]
    items: dict[str, dict]


def landed(admin, bucket: str, table: str, connector: str, dlq_prefix: str) -> Landed:
    s3, dynamodb = admin.client("s3"), admin.client("dynamodb")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="topics/").get("Contents", [])]
    objects = {k: {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=bucket, Key=k)["TagSet"]} for k in keys}
    letters = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=dlq_prefix).get("Contents", [])]
    items = dynamodb.query(
        TableName=table, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": connector}}
    )["Items"]
    return Landed(objects, letters, {i["sk"]["S"]: i for i in items})
