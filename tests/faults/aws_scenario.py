"""S3 and DynamoDB fault scenarios: numbered records in, runs through the CLI (in this process, its Spark workers
behind the fault proxy), and the checks every scenario ends with, read straight from moto (not through the proxy).

Record n of partition p is `{"p": p, "n": n, "pad": ...}` at offset n, so what landed tells duplicates (an
offset twice), missing records (an offset below the partition's committed offset that is not in S3) and
records written past the commit (an offset at or above it) without any other bookkeeping."""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import orjson

from devtools.producer import create_topic, produce
from sink_engine import cli
from tests.conftest import BUCKET
from tests.dlq_corpus import raw_config
from tests.runs import committed
from tests.s3_reader import landed_by_key

KIB = 1024

# Small records: every file goes up in one PutObject.
SMALL = {"partitions": 2, "per_partition": 1000, "pad": 100, "settings": {"flush.size": 300}}
# 10 kB records, 5.5 MB files: every file is a streamed multipart upload of two parts (5 MiB and the rest).
LARGE = {
    "partitions": 2,
    "per_partition": 1200,
    "pad": 10 * KIB,
    "settings": {"flush.size": 550, "s3.part.size": 5 * KIB * KIB},
}
# Both: partition 0 as LARGE, partition 1's records of 100 bytes (single PutObjects).
MIXED = {**LARGE, "pad": (10 * KIB, 100)}


@dataclass
class RunOutcome:
    code: int
    out: str
    err: str
    seconds: float


def prepare(stack, connector, shape: dict, **settings):
    """A fresh topic filled as `shape` says and its connector config (shape's settings, then `settings`)."""
    config = connector(**{"sink.lease.duration.ms": 4000, **shape["settings"], **settings})
    topic = config["topics"][0]
    partitions, per_partition = shape["partitions"], shape["per_partition"]
    create_topic(stack.bootstrap_servers, topic, partitions)
    pads = shape["pad"] if isinstance(shape["pad"], tuple) else (shape["pad"],) * partitions
    values = [
        orjson.dumps({"p": i % partitions, "n": i // partitions, "pad": "x" * pads[i % partitions]})
        for i in range(partitions * per_partition)
    ]
    produce(stack.bootstrap_servers, topic, values, partitions)
    return config


def expected_commits(shape: dict, config) -> dict[int, int]:
    """Every closed file committed: whole multiples of flush.size per partition (the tail waits)."""
    flush = config["flush.size"]
    return {p: shape["per_partition"] // flush * flush for p in range(shape["partitions"])}


def run_cli(config, tmp_path: Path) -> RunOutcome:
    """`sink-engine run --config FILE` in this process; its exit code, output and error output."""
    path = tmp_path / f"{config.name}.json"
    path.write_text(json.dumps({"name": config.name, "config": raw_config(config)}))
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["run", "--config", str(path)])
    return RunOutcome(code, out.getvalue(), err.getvalue(), time.monotonic() - started)


def leftover_uploads(s3, prefix: str) -> list[str]:
    uploads = s3.list_multipart_uploads(Bucket=BUCKET, Prefix=prefix).get("Uploads", [])
    return [u["Key"] for u in uploads]


def landed(s3, dynamodb, config) -> dict:
    """What S3 and the offsets table hold for the connector's topic, and how it compares:
    `commits` by partition, `records` landed, `duplicates`, `missing` (below a commit, not in S3),
    `past_commit` (in S3 beyond a commit: written by a run that did not commit them), `unlisted_last_files`
    (a commit's last file that is not in S3) and `leftover_uploads` (incomplete multipart uploads)."""
    topic = config["topics"][0]
    commits = {p: c.next_offset for p, c in committed(dynamodb, config).items()}
    by_key = landed_by_key(s3, topic)
    seen = Counter((r["p"], r["n"]) for records in by_key.values() for r in records)
    expected = {(p, n) for p, end in commits.items() for n in range(end)}
    return {
        "commits": commits,
        "records": sum(seen.values()),
        "duplicates": sum(count - 1 for count in seen.values()),
        "missing": len(expected - set(seen)),
        "past_commit": len(set(seen) - expected),
        "unlisted_last_files": [
            c.last_file for c in committed(dynamodb, config).values() if c.last_file and c.last_file not in by_key
        ],
        "leftover_uploads": len(leftover_uploads(s3, f"topics/{topic}/")),
    }


def assert_safe(state: dict) -> None:
    """What must hold after any run, failed or not: no record twice, no commit past what is in S3."""
    assert state["duplicates"] == 0, state
    assert state["missing"] == 0, state
    assert state["unlisted_last_files"] == [], state


def assert_complete(state: dict, commits: dict[int, int]) -> None:
    """What must hold once a run succeeded after the faults stopped: the work done, exactly once, nothing
    left behind."""
    assert_safe(state)
    assert state["commits"] == commits, state
    assert state["past_commit"] == 0 and state["leftover_uploads"] == 0, state


def record_figures(figures: dict, proxy, runs: list[RunOutcome], state: dict) -> None:
    figures.update(
        faults=dict(proxy.injected),
        runs=len(runs),
        exit_codes=[r.code for r in runs],
        records=state["records"],
        duplicates=state["duplicates"],
        missing=state["missing"],
        leftover_uploads=state["leftover_uploads"],
    )
