"""`make bench-configs`: bounded runs of many small connectors, as `sink-engine run` processes on local Spark: one
connector alone; N connectors in one application (`--config-dir`, up to `CONNECTORS_AT_ONCE` at once); the same
one connector after another in one application; and N separate `run` processes one after another (what a run per
connector costs). Each row reads the same topics from the start under connector names and a `topics.dir` of its
own. Prints wall seconds (on a shared machine, a median of --repeat measurements). Usage:
    python -m devtools.bench_configs [--connectors 10] [--records 2000] [--partitions 2] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from devtools.producer import create_topic, produce_events
from devtools.stack import LocalStack

BUCKET, TABLE = "bench-configs-lake", "bench-configs-offsets"
ONE_AT_A_TIME = "import sys, sink_engine.cli_run as r; r.CONNECTORS_AT_ONCE = 1; from sink_engine.cli import main; "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connectors", type=int, default=10)
    parser.add_argument("--records", type=int, default=2000, help="records per connector's topic")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="measurements per row, each under new connector names")
    args = parser.parse_args()
    with LocalStack() as stack, tempfile.TemporaryDirectory() as folder:
        stack.apply_env()
        stack.create_store(BUCKET, TABLE)
        topics = [f"bench-configs-{i}" for i in range(args.connectors)]
        for topic in topics:
            create_topic(stack.bootstrap_servers, topic, args.partitions)
            produce_events(stack.bootstrap_servers, topic, args.records, args.partitions)
        walls: dict[str, list[float]] = {}
        for attempt in range(args.repeat):
            for row, files in _rows(stack, Path(folder) / str(attempt), topics, args.partitions).items():
                walls.setdefault(row, []).append(_timed(row, files, stack))
    print(f"\n{args.connectors} connectors of {args.records:,} records in {args.partitions} partitions, local Spark")
    print(f"| {'run':<48} | wall s (median) | each |")
    print(f"|{'-' * 50}|-----------------|------|")
    for row, seconds in walls.items():
        print(f"| {row:<48} | {statistics.median(seconds):>15.1f} | {' '.join(f'{s:.1f}' for s in seconds)} |")


def _rows(stack: LocalStack, folder: Path, topics: list[str], partitions: int) -> dict[str, list[Path]]:
    """Each row's connector files, its own names and topics.dir."""
    n = len(topics)
    rows = {
        "1 connector alone": "alone",
        f"{n} connectors in one application, 8 at once": "together",
        f"{n} connectors in one application, one at a time": "sequential",
        f"{n} separate runs, one after another": "separate",
    }
    files = {}
    for row, tag in rows.items():
        (folder / tag).mkdir(parents=True)
        chosen = topics[:1] if tag == "alone" else topics
        name = f"{folder.name}-{tag}"
        files[row] = [_config(stack, folder / tag, f"{name}-{topic}", topic, partitions) for topic in chosen]
    return files


def _config(stack: LocalStack, folder: Path, name: str, topic: str, partitions: int) -> Path:
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": topic,
        "bootstrap.servers": stack.bootstrap_servers,
        "s3.bucket.name": BUCKET,
        "s3.region": "us-east-1",
        "topics.dir": name,
        "flush.size": 500,
        "format.class": "JsonFormat",
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.storage.dynamodb.table": TABLE,
        "tasks.max": partitions,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "config": config}))
    return path


def _timed(row: str, files: list[Path], stack: LocalStack) -> float:
    """Wall seconds of the row's runs."""
    env = {**os.environ, **stack.env}
    commands = [[sys.executable, "-m", "sink_engine", "run", "--config-dir", str(files[0].parent)]]
    if "separate" in row:
        commands = [[sys.executable, "-m", "sink_engine", "run", "--config", str(f)] for f in files]
    elif "one at a time" in row:
        argv = ["run", "--config-dir", str(files[0].parent)]
        commands = [[sys.executable, "-c", ONE_AT_A_TIME + f"sys.exit(main({argv!r}))"]]
    started = time.monotonic()
    for command in commands:
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


if __name__ == "__main__":
    main()
