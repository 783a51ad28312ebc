"""`sink-engine run` started from a terminal or a pipe prints the run's own lines: no Spark stage bars and no JVM
start-up notices (NativeCodeLoader, setLogLevel hints) when the engine starts Spark itself; on a terminal it shows
its own progress board, in a pipe its totals line as a progress line."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from devtools.producer import create_topic, produce_events
from tests.conftest import BUCKET, TABLE

SPARK_NOISE = ("NativeCodeLoader", "setLogLevel", "[Stage", "WARN")


def _connector(stack, unique: str, tmp_path, name: str, partitions: int = 2, events: int = 400):
    """A JSON connector's config file (flush.size 100) over a new topic of `events` sample events."""
    topic = f"{name}-{unique}"
    create_topic(stack.bootstrap_servers, topic, partitions)
    produce_events(stack.bootstrap_servers, topic, events, partitions)
    config = tmp_path / f"{name}.json"
    config.write_text(
        json.dumps(
            {
                "name": f"{name}-{unique}",
                "config": {
                    "topics": topic,
                    "bootstrap.servers": stack.bootstrap_servers,
                    "s3.bucket.name": BUCKET,
                    "s3.region": "us-east-1",
                    "flush.size": 100,
                    "format.class": "JsonFormat",
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false",
                    "offset.storage.dynamodb.table": TABLE,
                },
            }
        )
    )
    return topic, config


def test_a_run_prints_its_own_lines_and_no_spark_noise(stack, unique, tmp_path):
    _, config = _connector(stack, unique, tmp_path, "quiet")
    done = subprocess.run(
        [sys.executable, "-m", "sink_engine", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **stack.env},
    )
    assert done.returncode == 0, done.stderr
    assert "run finished" in done.stdout and done.stdout.count("wrote s3://") == 4
    # no board redrawn in a pipe: lines as they happen, and the totals as a progress line (every 10 s, and at the end)
    assert "\x1b[" not in done.stdout
    said = done.stdout.splitlines()
    assert said[0] == "offsets table, bucket, Kafka and lease checked; starting Spark"
    assert said[1].startswith("lease taken: epoch 1") and said[2].startswith(
        "planned: 400 records in 2 of 2 partitions"
    )
    assert any(line.startswith("progress: 2 partitions: 400 records read, 4 files closed, 0 left; ") for line in said)
    for noise in SPARK_NOISE:
        assert noise not in done.stderr, done.stderr


def test_a_run_on_a_terminal_shows_its_progress_per_partition(stack, unique, tmp_path):
    topic, config = _connector(stack, unique, tmp_path, "board")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sink_engine", "run", "--config", str(config)],
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**os.environ, **stack.env},
    )
    os.close(follower)
    screen = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal is closed once the run's process has exited
            break
        if not data:
            break
        screen += data
    os.close(leader)
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr
    text = screen.decode()
    final_board = text[text.rindex("partition ") : text.index("run finished")]
    assert f"{topic}-0" in final_board and f"{topic}-1" in final_board
    assert "2 partitions: 400 records read, 4 files closed, 0 left" in final_board
    for noise in SPARK_NOISE:
        assert noise not in text and noise not in stderr


def test_status_shows_no_commit_time_until_a_run_commits_records(stack, unique, tmp_path):
    # given a connector whose topic holds fewer records than flush.size, after a run (it closed no file, and only
    # pinned where the partitions start)
    topic, config = _connector(stack, unique, tmp_path, "pinned", partitions=1, events=40)
    cli = [sys.executable, "-m", "sink_engine"]
    env = {**os.environ, **stack.env}
    run = subprocess.run([*cli, "run", "--config", str(config)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0 and "0 files" in run.stdout, run.stderr
    # when status is asked
    status = subprocess.run(
        [*cli, "status", "--config", str(config)], capture_output=True, text=True, timeout=60, env=env
    )
    # then its row shows the start the run pinned, the lag, and no commit time
    row = status.stdout.splitlines()[1].split()
    assert status.returncode == 0 and row == [f"{topic}-0", "0", "40", "40", "-", "-"], status.stdout
