"""A continuous run as its own process, records produced steadily beside it, and the check that every record
produced landed exactly once.

Records are produced by devtools.producer.SteadyProducer (`{"id": n}`, n counting up; `produced` maps partition ->
ids in offset order). `landed_once` reads every object of the topic back (JSON lines or Parquet) and asserts, per
partition, files that follow each other from offset 0 without gap or overlap, each id once, and the committed offset
at the end of what the files hold; `in_table_once` checks an IcebergFormat connector's table the same way (its rows
carry their Kafka partition and offset).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from tests.conftest import BUCKET
from tests.iceberg.duckdb_reader import duckdb_rows
from tests.iceberg.tables import rows, table_of
from tests.runs import committed_offsets
from tests.s3_reader import list_keys, read_json_lines


def start_continuous(config_path: str | Path | list[str], *extra: str, env: dict | None = None) -> subprocess.Popen:
    """`sink-engine run --continuous` of one config file or several, as its own process group (its Spark JVM and
    workers with it); `env` is added to this process's environment."""
    paths = config_path if isinstance(config_path, list) else [config_path]
    configs = [option for path in paths for option in ("--config", str(path))]
    return subprocess.Popen(
        [sys.executable, "-m", "sink_engine", *extra, "run", "--continuous", *configs],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the run and everything it started (its Spark JVM and Python workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)


def stop(process: subprocess.Popen, lease_ms: int) -> tuple[int, str, str]:
    """SIGTERM the run (its driver, as EMR's CancelJobRun with a grace period does) and wait for it to end (within
    its lease, and a margin)."""
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=lease_ms / 1000 + 20)
    return process.returncode, out, err


def started_when_the_lease_lapses(path: str | Path | list[str], lease_ms: int) -> subprocess.Popen:
    """A continuous run, started again until the lease of a killed one has lapsed (exit 3 before that)."""
    deadline = time.monotonic() + lease_ms / 1000 + 30
    while True:
        run = start_continuous(path)
        try:
            code = run.wait(timeout=8)
        except Exception:  # still running: it took the lease
            return run
        assert code == 3 and time.monotonic() < deadline, run.stderr.read()[-3000:]
        time.sleep(1)


def killed_and_restarted(
    path: str | Path | list[str], lease_ms: int, rng, alive_s: tuple[float, float], kills: int = 3
):
    """`kills` runs, each started once the previous one's lease lapsed and SIGKILLed (driver, JVM and workers) after
    a seeded random `alive_s` (low, high) seconds; returns the next run, started the same way and left running."""
    for _ in range(kills):
        run = started_when_the_lease_lapses(path, lease_ms)
        time.sleep(rng.uniform(*alive_s))
        kill_group(run)
    return started_when_the_lease_lapses(path, lease_ms)


def stop_once_caught_up(run, dynamodb, config, produced: dict[int, list[int]], lease_ms: int, timeout_s: float) -> None:
    """Wait until the run has committed everything `produced`, then SIGTERM it and assert it exits 0 (killed if it
    is still running after a failure)."""
    try:
        wait_for(caught_up(dynamodb, config, produced), timeout_s, "catching up with everything produced")
        code, _, err = stop(run, lease_ms)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)


def wait_for(condition, timeout_s: float, what: str, interval_s: float = 0.2):
    """`condition()`'s first true answer within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(interval_s)
    raise AssertionError(f"{what} did not happen within {timeout_s:g}s")


def caught_up(dynamodb, config, produced: dict[int, list[int]]):
    """A condition: every partition committed up to all it was produced."""
    return lambda: committed_offsets(dynamodb, config) == {p: len(ids) for p, ids in produced.items()}


def landed_once(s3, dynamodb, config, produced: dict[int, list[int]]) -> int:
    """Assert that every produced record is in exactly one object, in its partition's order, files contiguous from
    offset 0, and committed offsets at the end of what landed; returns how many files."""
    topic = config["topics"][0]
    files: dict[int, list[tuple[int, list[int]]]] = defaultdict(list)
    for key, records in _landed(s3, topic).items():
        _, partition, start = key.rsplit("/", 1)[1].rsplit("+", 2)
        files[int(partition)].append((int(start.split(".")[0]), [r["id"] for r in records]))
    committed = committed_offsets(dynamodb, config)
    for partition, ids in produced.items():
        landed, offset = [], 0
        for start, numbers in sorted(files[partition]):
            assert start == offset, f"partition {partition}: a file starts at {start}, expected {offset}"
            landed += numbers
            offset += len(numbers)
        assert landed == ids, f"partition {partition}: {len(landed)} records landed of {len(ids)} produced"
        assert committed.get(partition) == offset == len(ids), (partition, committed.get(partition), offset)
    return sum(len(f) for f in files.values())


def _landed(s3, topic: str) -> dict[str, list]:
    """Every object under `topics/<topic>/` read back (JSON lines, or Parquet), by key."""
    landed = {}
    for key in list_keys(s3, BUCKET, f"topics/{topic}/"):
        if key.endswith(".parquet"):
            body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
            landed[key] = pq.read_table(io.BytesIO(body)).to_pylist()
        else:
            landed[key] = read_json_lines(s3, BUCKET, key)
    return landed


def in_table_once(dynamodb, config, produced: dict[int, list[int]]) -> None:
    """Assert that the table holds every produced record once, at its partition and offset (as pyiceberg scans it,
    and DuckDB's iceberg extension reads the same rows), and that the committed offsets are at the end of what was
    produced."""
    landed: dict[int, list[tuple[int, int]]] = defaultdict(list)
    found_rows = rows(config)
    for row in found_rows:
        landed[row["_kafka_metadata_partition"]].append((row["_kafka_metadata_offset"], row["id"]))
    columns = ("_kafka_metadata_partition", "_kafka_metadata_offset", "id")
    assert sorted(
        tuple(r[c] for c in columns) for r in duckdb_rows(table_of(config).metadata_location, columns)
    ) == sorted(tuple(r[c] for c in columns) for r in found_rows), "DuckDB's iceberg extension reads other rows"
    for partition, ids in produced.items():
        found = sorted(landed[partition])
        assert [offset for offset, _ in found] == list(range(len(ids))), f"partition {partition}: offsets"
        assert [n for _, n in found] == ids, f"partition {partition}: {len(found)} rows of {len(ids)} produced"
    assert committed_offsets(dynamodb, config) == {p: len(ids) for p, ids in produced.items()}
