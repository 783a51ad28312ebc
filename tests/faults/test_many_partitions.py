"""Many partitions (issue 22): a run over hundreds of partitions plans, writes and commits every record once (its
tasks read all their ranges through one consumer; its commits go up to 99 partitions per transaction), and so does
a rerun after a run SIGKILLed while it writes or while it commits.

The fast cases use MANY partitions; the 1,000-partition run is marked `many_partitions` (`make test-many-partitions`).
"""

from __future__ import annotations

import random

import pytest

from devtools.producer import create_topic
from sink_engine.driver.job import run_job
from sink_engine.offsets.store import MAX_COMMITS
from tests.faults.landed_once import check_exactly_once, check_status, produce_numbered, write_config
from tests.faults.run_processes import KILLED, RunProcess, finish, kill_when

MANY = 300  # more than three transactions' worth of commits (MAX_COMMITS each)
PER_PARTITION, FLUSH = 20, 10


def many(stack, connector, partitions: int, **overrides):
    config = connector(**{"flush.size": FLUSH, "tasks.max": 4, **overrides})
    create_topic(stack.bootstrap_servers, config["topics"][0], partitions)
    produced = produce_numbered(stack.bootstrap_servers, config["topics"][0], 0, partitions * PER_PARTITION, partitions)
    return config, produced


@pytest.mark.parametrize(
    "partitions",
    [
        MANY,
        pytest.param(1000, marks=pytest.mark.many_partitions),
    ],
)
def test_a_run_over_many_partitions_lands_every_record_once(stack, spark, s3, dynamodb, connector, figures, partitions):
    assert partitions > 3 * MAX_COMMITS
    # given a topic of many partitions, 20 records in each
    config, produced = many(stack, connector, partitions)
    # when one run reads it with four tasks
    summary = run_job(config, spark, dynamodb)
    # then every record is in S3 once, every partition committed at its end, and `status` agrees
    assert summary.records_written == produced and len(summary.committed) == partitions
    landed = check_exactly_once(s3, dynamodb, config, partitions, produced)
    check_status(dynamodb, config, partitions, produced)
    figures.update(partitions=partitions, runs=1, run_seconds=round(summary.seconds, 1), **landed.figures())


@pytest.mark.parametrize("phase", ["write", "commit"])
def test_a_run_killed_over_many_partitions_then_rerun_lands_every_record_once(
    stack, spark, s3, dynamodb, connector, tmp_path, seed, figures, capsys, phase
):
    lease_ms = 3000
    config, produced = many(stack, connector, MANY, **{"sink.lease.duration.ms": lease_ms})
    path = write_config(config, tmp_path / "connector.json")
    # given a `run` process SIGKILLed (with its Spark JVM and workers) while its tasks write, or while it commits
    run = RunProcess(path)
    victim = kill_when([run], phase, random.Random(seed))
    assert victim is run and run.wait() == KILLED, run.errors
    # (what is there after the kill: contiguous files, offsets committed only where files are in S3)
    check_exactly_once(s3, dynamodb, config, MANY, produced, complete=False)
    # when runs go on until one completes
    codes = finish(path, config, lease_ms, capsys)
    # then every record is in S3 once and every partition is committed at its end
    landed = check_exactly_once(s3, dynamodb, config, MANY, produced)
    check_status(dynamodb, config, MANY, produced)
    figures.update(
        faults={f"SIGKILL at {phase}": 1},
        partitions=MANY,
        runs=1 + len(codes),
        exit_codes=[KILLED] + codes,
        killed_after=run.events[-1],
        **landed.figures(),
    )
