"""Restores in tests: a connector file, `sink-engine restore` in this process or as a subprocess, and a topic read
back whole, per partition."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from confluent_kafka import Consumer, TopicPartition

from sink_engine import cli
from sink_engine.failpoints import ENV_VAR
from sink_engine.restore.stored import origin_of
from tests.dlq_corpus import raw_config


def config_file(config, tmp_path) -> str:
    path = tmp_path / f"{config.name}.json"
    path.write_text(json.dumps({"name": config.name, "config": raw_config(config)}))
    return str(path)


def restore_argv(config, tmp_path, target: str, *options: str) -> list[str]:
    return [
        "restore",
        "--config",
        config_file(config, tmp_path),
        "--topic",
        config["topics"][0],
        "--target-topic",
        target,
        *options,
    ]


def restore(capsys, argv: list[str]) -> tuple[int, str]:
    """`sink-engine restore` in this process: its exit code and output (stdout, then stderr)."""
    capsys.readouterr()
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def restore_process(argv: list[str], stack, failpoint: str | None = None) -> subprocess.Popen:
    """`python -m sink_engine restore ...` as a child process with the stack's environment (and `failpoint` armed
    through SINK_ENGINE_FAILPOINT)."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    env.pop(ENV_VAR, None)
    if failpoint:
        env[ENV_VAR] = failpoint
    return subprocess.Popen(
        [sys.executable, "-m", "sink_engine", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
    )


def counts(output: str) -> dict[int, tuple[int, int, int]]:
    """The end's table: partition -> (read, present, produced)."""
    rows = {}
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["partition", "read"])
    for line in lines[start + 1 :]:
        parts = line.split()
        if len(parts) != 4 or not parts[0].isdigit():
            break
        rows[int(parts[0])] = tuple(int(p) for p in parts[1:])
    return rows


def topic_records(bootstrap: str, topic: str) -> dict[int, list[dict]]:
    """Every record of the topic by partition, in offset order: key, value, headers, timestamp (type, ms)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "restore-test-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        partitions = consumer.list_topics(timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        records: dict[int, list[dict]] = {p: [] for p in partitions}
        eof: set = set()
        while len(eof) < len(partitions):
            message = consumer.poll(10)
            assert message is not None, f"{topic} did not deliver to its end"
            if message.error():
                eof.add(message.partition())
                continue
            records[message.partition()].append(
                {
                    "key": message.key(),
                    "value": message.value(),
                    "headers": message.headers() or [],
                    "timestamp": message.timestamp(),
                    "offset": message.offset(),
                }
            )
        return records
    finally:
        consumer.close()


def restored(bootstrap: str, topic: str) -> dict[int, list[dict]]:
    """The target's records by partition with the origin header taken off and given as `origin`."""
    found = topic_records(bootstrap, topic)
    for records in found.values():
        for record in records:
            record["origin"] = origin_of(record["headers"])
            record["headers"] = record["headers"][:-1] if record["origin"] else record["headers"]
    return found


def killed_mid_restore(argv: list[str], stack, total: int, seed: int, kills: int) -> list[int]:
    """Start the restore of `total` records `kills` times, each SIGKILLed by the failpoint `restore_sigkill` as it
    hands a seeded random number of records to its producer; the numbers. Each is below what that restore has
    left to produce (a killed restore handed over no more than its number, so at least `total` minus the numbers
    before are left), so every kill lands mid-restore however fast the machine."""
    import random
    import signal

    chance = random.Random(seed)
    handed: list[int] = []
    for kill in range(kills):
        left = total - sum(handed)
        handed.append(chance.randint(1, left - (kills - kill)))
        child = restore_process(argv, stack, failpoint=f"restore_sigkill@{handed[-1]}")
        out = child.communicate(timeout=300)[0].decode()
        assert child.returncode == -signal.SIGKILL, (handed, out)
    return handed


def at_once(argv: list[str], stack, n: int = 2) -> list[tuple[int, str]]:
    """The restore started `n` times at the same moment: (exit code, output) of each."""
    children = [restore_process(argv, stack) for _ in range(n)]
    return [(child.wait(timeout=300), child.stdout.read().decode()) for child in children]
