"""Process kills: `python -m sink_engine run` processes killed with SIGKILL at random moments (during start-up,
while tasks write, during the commit), with a second run started meanwhile, round after round, with new records
between rounds. After every round, what landed is contiguous and committed only where files are in S3; at the
end (after a clean run) every record is in S3 exactly once and `status` agrees."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

from devtools.producer import create_topic
from tests.faults.landed_once import check_exactly_once, check_status, produce_numbered, write_config
from tests.faults.run_processes import KILLED, PHASES, RunProcess, finish, kill_when


@dataclass
class LoopFigures:
    rounds: int = 0
    records: int = 0
    kills: Counter = field(default_factory=Counter)  # by phase
    last_events: Counter = field(default_factory=Counter)  # the last event a killed run logged
    overlaps: int = 0
    exit_codes: list = field(default_factory=list)


def kill_loop(
    bootstrap: str,
    config,
    path: str,
    rng: random.Random,
    rounds: int,
    per_round: int,
    partitions: int,
    s3,
    dynamodb,
    check_every: int = 1,
) -> LoopFigures:
    """Rounds of: new records, a run, a second run started 0-2 s later, a SIGKILL at a random moment of a phase
    (each phase once in every three rounds, in random order) of the first run to reach it, both waited for; then,
    every `check_every` rounds, the invariants that hold at any time."""
    figures = LoopFigures()
    phases = []
    for _ in range(rounds):
        phases = phases or rng.sample(list(PHASES), len(PHASES))  # every phase once per len(PHASES) rounds
        phase = phases.pop()
        figures.records = produce_numbered(bootstrap, config["topics"][0], figures.records, per_round, partitions)
        first = RunProcess(path)
        time.sleep(rng.uniform(0, 2))
        second = RunProcess(path)
        figures.overlaps += first.alive
        victim = kill_when([first, second], phase, rng)
        codes = [first.wait(), second.wait()]
        if victim is not None:
            figures.kills[phase] += 1
            figures.last_events[(victim.events or ["none"])[-1]] += 1
        for run, code in zip((first, second), codes):
            assert code in (0, 3, 4, KILLED), f"exit {code}: {run.errors}"
        figures.exit_codes += codes
        figures.rounds += 1
        if figures.rounds % check_every == 0:
            check_exactly_once(s3, dynamodb, config, partitions, figures.records, complete=False)
    return figures


def scenario(stack, connector, tmp_path, partitions: int, **overrides):
    config = connector(**{"tasks.max": partitions, **overrides})
    create_topic(stack.bootstrap_servers, config["topics"][0], partitions)
    return config, write_config(config, tmp_path / "connector.json")


def test_sigkill_loop_with_overlapping_runs(stack, spark, s3, dynamodb, connector, tmp_path, seed, figures, capsys):
    rng = random.Random(seed)
    partitions, lease_ms = 3, 3000
    config, path = scenario(
        stack, connector, tmp_path, partitions, **{"flush.size": 100, "sink.lease.duration.ms": lease_ms}
    )
    loop = kill_loop(
        stack.bootstrap_servers,
        config,
        path,
        rng,
        rounds=3,
        per_round=1200,
        partitions=partitions,
        s3=s3,
        dynamodb=dynamodb,
    )
    final = finish(path, config, lease_ms, capsys)
    landed = check_exactly_once(s3, dynamodb, config, partitions, loop.records)
    check_status(dynamodb, config, partitions, loop.records)
    figures.update(
        faults={f"SIGKILL at {k}": v for k, v in loop.kills.items()},
        runs=len(loop.exit_codes) + len(final),
        exit_codes=loop.exit_codes + final,
        overlaps=loop.overlaps,
        killed_after=dict(loop.last_events),
        **landed.figures(),
    )


@pytest.mark.soak
def test_soak_ten_million_records_through_the_sigkill_loop(
    stack, spark, s3, dynamodb, connector, tmp_path, seed, figures, capsys
):
    rng = random.Random(seed)
    partitions, lease_ms, rounds = 4, 5000, 20
    config, path = scenario(
        stack,
        connector,
        tmp_path,
        partitions,
        **{"flush.size": 25_000, "sink.lease.duration.ms": lease_ms, "sink.kafka.timeout.ms": 120_000},
    )
    started = time.monotonic()
    loop = kill_loop(
        stack.bootstrap_servers,
        config,
        path,
        rng,
        rounds=rounds,
        per_round=500_000,
        partitions=partitions,
        s3=s3,
        dynamodb=dynamodb,
        check_every=5,
    )
    final = finish(path, config, lease_ms, capsys)
    landed = check_exactly_once(s3, dynamodb, config, partitions, loop.records)
    check_status(dynamodb, config, partitions, loop.records)
    assert landed.records >= 10_000_000
    figures.update(
        faults={f"SIGKILL at {k}": v for k, v in loop.kills.items()},
        runs=len(loop.exit_codes) + len(final),
        exit_codes=dict(Counter(loop.exit_codes + final)),
        overlaps=loop.overlaps,
        killed_after=dict(loop.last_events),
        loop_seconds=round(time.monotonic() - started, 1),
        **landed.figures(),
    )
