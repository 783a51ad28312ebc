"""`sink-engine run --continuous` of several connectors (JSON, Parquet, IcebergFormat) in one Spark application: every
record of every connector lands once; a connector poisoned with `errors.tolerance=none` stops alone, logged and
named, while the others keep landing, and the run ends with its exit code; SIGKILLs of the job at seeded moments,
each followed by a restart, lose and duplicate nothing."""

from __future__ import annotations

import json
import random
import threading
import time
from contextlib import ExitStack

import pytest

from devtools.producer import SteadyProducer, create_topic, produce
from tests.continuous.runs import (
    caught_up,
    in_table_once,
    kill_group,
    killed_and_restarted,
    landed_once,
    start_continuous,
    stop,
    wait_for,
)
from tests.faults.landed_once import write_config
from tests.iceberg.conftest import catalog_file, iceberg_connector  # noqa: F401 (fixtures shared by import)
from tests.iceberg.tables import create_namespace
from tests.runs import committed_offsets

PARTITIONS = 4
LEASE_MS = 8000
SCHEDULE_MS = 2000
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"


@pytest.fixture
def connectors(stack, connector, iceberg_connector, unique, tmp_path):  # noqa: F811 (the fixture imported above)
    """JSON, Parquet and IcebergFormat connectors, each on a fresh topic of PARTITIONS partitions, committing on a
    wall-clock schedule; returns {kind: (config, config file)}."""
    common = {"rotate.schedule.interval.ms": SCHEDULE_MS, "tasks.max": 2, "sink.lease.duration.ms": LEASE_MS}
    configs = {
        "json": connector(name=f"json-{unique}", topics=f"json-{unique}", **{"flush.size": 500}, **common),
        "parquet": connector(
            name=f"parquet-{unique}",
            topics=f"parquet-{unique}",
            **{"flush.size": 500, "format.class": PARQUET},
            **common,
        ),
        "iceberg": iceberg_connector(
            name=f"iceberg-{unique}",
            topics=f"iceberg-{unique}",
            **{
                "iceberg.control.commit.interval-ms": SCHEDULE_MS,
                "iceberg.tables.kafka-metadata-enabled": "true",
                "tasks.max": 2,
                "sink.lease.duration.ms": LEASE_MS,
            },
        ),
    }
    for config in configs.values():
        create_topic(stack.bootstrap_servers, config["topics"][0], PARTITIONS)
    create_namespace(configs["iceberg"])
    return {kind: (config, write_config(config, tmp_path / f"{kind}.json")) for kind, config in configs.items()}


def _producers(stack, configs, per_second: int) -> list[SteadyProducer]:
    return [
        SteadyProducer(stack.bootstrap_servers, c["topics"][0], list(range(PARTITIONS)), per_second) for c in configs
    ]


def _landed_once(s3, dynamodb, connectors, produced: dict[str, dict[int, list[int]]]) -> None:
    for kind, (config, _) in connectors.items():
        if kind == "iceberg":
            in_table_once(dynamodb, config, produced[kind])
        else:
            landed_once(s3, dynamodb, config, produced[kind])


def test_many_connectors_land_each_record_once_while_a_poisoned_one_stops_alone(
    stack, connector, connectors, s3, dynamodb, unique, tmp_path
):
    # given JSON, Parquet and IcebergFormat connectors, and a fourth (errors.tolerance=none) whose topic will get a
    # record that is not JSON, all in one continuous run
    poisoned = connector(
        name=f"poisoned-{unique}",
        topics=f"poisoned-{unique}",
        **{"flush.size": 500, "rotate.schedule.interval.ms": SCHEDULE_MS, "sink.lease.duration.ms": LEASE_MS},
    )
    create_topic(stack.bootstrap_servers, poisoned["topics"][0], 1)
    produce(stack.bootstrap_servers, poisoned["topics"][0], [b'{"id": %d}' % n for n in range(150)], 1)
    paths = [path for _, path in connectors.values()] + [write_config(poisoned, tmp_path / "poisoned.json")]
    run = start_continuous(paths)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(run.stdout))
    reader.start()
    kinds = list(connectors)
    producing = ExitStack()
    try:
        first = [producing.enter_context(p) for p in _producers(stack, [connectors[k][0] for k in kinds], 200)]
        # when the poisoned connector has committed its first 150 records (its schedule's cut), then gets a bad one
        wait_for(lambda: committed_offsets(dynamodb, poisoned) == {0: 150}, 90, "the poisoned connector's first cut")
        produce(stack.bootstrap_servers, poisoned["topics"][0], [b"{not json", b'{"id": 150}'], 1)
        # then it stops alone, saying why
        wait_for(lambda: any(line.startswith(f"[{poisoned.name}] stopped: ") for line in lines), 60, "its stop")
        # and the others keep landing what is produced after it stopped
        time.sleep(4)
        producing.close()
        produced = {kind: producer.produced for kind, producer in zip(kinds, first)}
        for kind in kinds:
            wait_for(caught_up(dynamodb, connectors[kind][0], produced[kind]), 60, f"{kind} catching up")
        # and SIGTERM ends the run with the poisoned connector's exit code, naming each outcome
        code, out, err = stop(run, LEASE_MS)
    finally:
        producing.close()
        if run.poll() is None:
            kill_group(run)
        reader.join(30)
    assert code == 1, err[-3000:]
    said = [line.strip() for line in [*lines, *out.splitlines()]]  # (the reader and `stop` read the pipe)
    assert f"connectors: 3 committed, 1 failed: {poisoned.name} (exit 1)" in said, said[-5:]
    assert f"error: [{poisoned.name}] " in err and f"{poisoned['topics'][0]}-0@150" in err, err[-3000:]
    failed = [json.loads(line[line.index("{") :]) for line in err.splitlines() if '"CONNECTOR_FAILED"' in line]
    assert [event["connector"] for event in failed] == [poisoned.name], failed
    assert f"{poisoned['topics'][0]}-0@150" in failed[0]["cause"]
    # and every record of the others is in S3 or its table once; the poisoned one committed what came before
    _landed_once(s3, dynamodb, connectors, produced)
    assert committed_offsets(dynamodb, poisoned) == {0: 150}


def test_sigkilled_at_seeded_moments_and_restarted_every_record_of_every_connector_lands_once(
    stack, connectors, s3, dynamodb, seed
):
    rng = random.Random(seed)
    kinds = list(connectors)
    paths = [path for _, path in connectors.values()]
    # given records produced to every connector throughout, and the job SIGKILLed (driver, JVM and workers) at
    # seeded random moments, each followed by a restart
    with ExitStack() as producing:
        producers = [producing.enter_context(p) for p in _producers(stack, [connectors[k][0] for k in kinds], 150)]
        run = killed_and_restarted(paths, LEASE_MS, rng, (4, 12), kills=2)
        time.sleep(3)
    produced = {kind: producer.produced for kind, producer in zip(kinds, producers)}
    # when a last run catches up with everything produced and is stopped
    try:
        for kind in kinds:
            wait_for(caught_up(dynamodb, connectors[kind][0], produced[kind]), 120, f"{kind} catching up")
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
    # then every record of every connector is in S3 or its table once, in order, and committed
    _landed_once(s3, dynamodb, connectors, produced)
