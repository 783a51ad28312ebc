"""What a first run meets, reported in seconds and before Spark starts: an unreachable broker (refused, or a name that
does not resolve) in `status`, `doctor` and `run`, naming the address and with a few lines of the client's log; the
lease of a SIGKILLed run (when it lapses, that its renewals stopped), waited for with `--wait-for-lease`; a missing
offsets table in `status` as in `run`; a missing bucket before anything is read."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from devtools.stack import free_port
from tests.conftest import BUCKET, TABLE

SPARK_STARTING = "starting Spark"


def _cli(stack, *args: str, timeout: float = 300) -> tuple[int, str, str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sink_engine", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **stack.env},
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def _config_file(stack, tmp_path, unique: str, **overrides) -> str:
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "topics": f"events-{unique}",
        "bootstrap.servers": stack.bootstrap_servers,
        "s3.bucket.name": BUCKET,
        "s3.region": "us-east-1",
        "flush.size": 10,
        "format.class": "JsonFormat",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.storage.dynamodb.table": TABLE,
        **overrides,
    }
    path = tmp_path / f"connector-{unique}.json"
    path.write_text(json.dumps({"name": f"conn-{unique}", "config": config}))
    return str(path)


UNREACHABLE = {
    "refused": ("127.0.0.1:{port}", "127.0.0.1:{port} refused the connection"),
    "unresolvable": ("kafka-{unique}.invalid:9092", "kafka-{unique}.invalid:9092 does not resolve"),
}


@pytest.mark.parametrize("command", ["status", "doctor", "run"])
@pytest.mark.parametrize("broker", UNREACHABLE, ids=list(UNREACHABLE))
def test_an_unreachable_broker_is_named_within_seconds(stack, tmp_path, unique, command, broker):
    # given a connector whose only bootstrap address refuses connections, or does not resolve
    address, says = (
        text.replace("{port}", str(free_port())).replace("{unique}", unique) for text in UNREACHABLE[broker]
    )
    path = _config_file(stack, tmp_path, unique, **{"bootstrap.servers": address})
    # when the command runs (the client's own timeout, sink.kafka.timeout.ms, is left at its 60 s)
    code, out, err, seconds = _cli(stack, command, "--config", path)
    # then it fails within 10 s, naming the address and what happened to it
    assert code == 1, (out, err)
    assert seconds < 10, seconds
    assert says.split(" ", 1)[1] in out + err and address in out + err, (out, err)
    # with a few lines of stderr at most, and no Spark started
    assert len(err.splitlines()) <= 3, err
    assert SPARK_STARTING not in out


HOLDER = textwrap.dedent(
    """
    import sys, time
    from sink_engine.aws import dynamodb_client
    from sink_engine.offsets import LeaseKeeper, Leases
    leases = Leases(dynamodb_client("us-east-1"), sys.argv[1], lambda: int(time.time() * 1000))
    token = leases.acquire(sys.argv[2], "killed-run", int(sys.argv[3]))
    with LeaseKeeper(leases, token, int(sys.argv[3]), renewals_per_lease=10):
        print("holding", flush=True)
        time.sleep(600)
    """
)


def test_a_run_after_a_killed_run_says_when_the_lease_lapses_and_waits_for_it_when_asked(
    stack, tmp_path, unique, new_topic
):
    # given a topic with records and a run holding the connector's lease of 20 s, renewing it every 2 s
    lease_ms = 20_000
    new_topic(f"events-{unique}", 1, events=30)
    path = _config_file(stack, tmp_path, unique, **{"sink.lease.duration.ms": str(lease_ms)})
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, TABLE, f"conn-{unique}", str(lease_ms)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **stack.env},
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        # when a run starts while it is alive
        code, out, err, _ = _cli(stack, "run", "--config", path)
        # then it is refused at once, saying the holder still renews the lease
        assert code == 3 and SPARK_STARTING not in out, (out, err)
        assert "leased by run killed-run until" in err and "it renewed the lease" in err, err
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    # when the holder was SIGKILLed 11 s ago (its renewals stopped; its lease lapses within 9 s) and a run starts
    time.sleep(11)
    code, out, err, seconds = _cli(stack, "run", "--config", path)
    # then it is refused before Spark starts, saying when the lease lapses in seconds and that its renewals stopped
    assert code == 3 and SPARK_STARTING not in out and seconds < 10, (out, err)
    lapse = re.search(r"until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+, in (\d+) s: its renewals stopped (\d+) s ago", err)
    assert lapse and 0 <= int(lapse.group(1)) <= 9 and int(lapse.group(2)) >= 10, err
    assert "--wait-for-lease" in err
    # and with --wait-for-lease the run waits for the lease to lapse, then starts Spark and goes on
    code, out, err, _ = _cli(stack, "run", "--wait-for-lease", "--config", path)
    assert code == 0, err
    lines = out.splitlines()
    waited = next(i for i, line in enumerate(lines) if line.startswith("waiting for the lease:"))
    spark = next(i for i, line in enumerate(lines) if SPARK_STARTING in line)
    taken = next(i for i, line in enumerate(lines) if line.startswith("lease taken: epoch 2"))
    assert waited < spark < taken, out
    assert "its renewals stopped" in lines[waited]
    assert "30 records" in out and "run finished" in out


def test_status_on_a_missing_table_says_what_run_says(stack, tmp_path, unique):
    # given a connector whose offsets table does not exist
    path = _config_file(stack, tmp_path, unique, **{"offset.storage.dynamodb.table": f"missing-{unique}"})
    # when status and run are asked
    status = _cli(stack, "status", "--config", path)
    run = _cli(stack, "run", "--config", path)
    # then both say the same: run init first, before Spark starts
    expected = (
        f"error: offsets table missing-{unique} does not exist (offset.storage.dynamodb.table); "
        "run `sink-engine init` first"
    )
    for code, out, err, _ in (status, run):
        assert code == 1 and err.strip() == expected, (out, err)
    assert SPARK_STARTING not in run[1]


def test_a_missing_bucket_is_refused_before_anything_is_read(stack, tmp_path, unique, new_topic):
    # given records and a connector whose bucket does not exist
    new_topic(f"events-{unique}", 1, events=30)
    path = _config_file(stack, tmp_path, unique, **{"s3.bucket.name": f"absent-{unique}"})
    # when it runs
    code, out, err, _ = _cli(stack, "run", "--config", path)
    # then it is refused naming the key, before Spark starts
    assert code == 1 and SPARK_STARTING not in out
    assert err.strip() == f"error: bucket absent-{unique} does not exist (s3.bucket.name); nothing was read"
