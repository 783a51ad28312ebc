"""Restore under process kills: `python -m sink_engine restore` SIGKILLed at seeded random moments during start-up,
or mid-produce at a seeded random record (a failpoint, so that the kill lands before the restore ends), sometimes
with a second restore started beside it, round after round; then a clean restore.
Every record of the backup is then in the target exactly once, in order per partition (partition for partition),
or once each with each key's records in order (through the partitioner). The fast subset is in
tests/functional/test_restore.py."""

from __future__ import annotations

import random
import signal
import time

import pytest

from sink_engine.restore.target import TARGET_CONFIG
from tests.functional.test_restore import PARTITIONS, assert_each_record_once_in_order, backed_up
from tests.restore_runs import counts, restore_argv, restore_process, restored, topic_records

pytestmark = pytest.mark.fault_matrix
PER_PARTITION = 600
ROUNDS = 8


def kill_rounds(argv: list[str], stack, target: str, seed: int) -> list[str]:
    """ROUNDS restores, each killed in start-up (SIGKILL 0.2-2.5 s after its start) or while producing (by the
    failpoint `restore_sigkill`, at a seeded random record among those the target still lacks), a second one
    started beside it every third round (left to finish); what each round did."""
    chance = random.Random(seed)
    done = []
    for round_number in range(ROUNDS):
        beside = restore_process(argv, stack) if round_number % 3 == 2 else None
        if chance.random() < 0.3:
            child = restore_process(argv, stack)
            delay = chance.uniform(0.2, 2.5)
            time.sleep(delay)
            child.send_signal(signal.SIGKILL)
            child.wait()
            phase = f"start-up +{delay:.2f}s"
        else:
            left = PARTITIONS * PER_PARTITION - sum(
                len(r) for r in topic_records(stack.bootstrap_servers, target).values()
            )
            at = chance.randint(1, max(1, left - 1))
            child = restore_process(argv, stack, failpoint=f"restore_sigkill@{at}")
            child.communicate(timeout=300)
            # a restore that found fewer records to produce (the one beside it produced them) ends instead
            ended = "" if child.returncode == -signal.SIGKILL else f" (exit {child.returncode})"
            phase = f"producing, record {at} of {left}{ended}"
        child.stdout.close()
        if beside is not None:
            assert beside.wait(timeout=300) == 0, beside.stdout.read().decode()
            beside.stdout.close()
        done.append(f"{phase}{' (with a second restore)' if beside else ''}")
    return done


@pytest.mark.parametrize("target_partitions", [PARTITIONS, 2])
def test_killed_restores_then_a_clean_one_write_each_record_once(
    stack, new_topic, spark, dynamodb, connector, unique, tmp_path, seed, target_partitions
):
    # given an envelope backup of 3 partitions and a target of 3 (partition for partition) or 2 (partitioner)
    config, source = backed_up(stack, spark, dynamodb, connector, "parquet", per_partition=PER_PARTITION)
    topic, target = config["topics"][0], f"kills-{unique}"
    new_topic(target, target_partitions, settings=TARGET_CONFIG)
    argv = restore_argv(config, tmp_path, target)
    # when restores are killed round after round, then one runs to its end
    rounds = kill_rounds(argv, stack, target, seed)
    clean = restore_process(argv, stack)
    assert clean.wait(timeout=300) == 0, (rounds, clean.stdout.read().decode())
    out = clean.stdout.read().decode()
    # then it read every record, and every record is in the target once
    assert sum(c[0] for c in counts(out).values()) == PARTITIONS * PER_PARTITION, (rounds, out)
    if target_partitions == PARTITIONS:
        assert_each_record_once_in_order(stack, source, target, topic)
        return
    found = [r for records in restored(stack.bootstrap_servers, target).values() for r in records]
    assert sorted(r["origin"] for r in found) == sorted(
        (topic, p, r["offset"]) for p, rs in source.items() for r in rs
    ), rounds
    for records in restored(stack.bootstrap_servers, target).values():
        by_key: dict = {}
        for r in records:
            by_key.setdefault((r["origin"][1], r["key"]), []).append(r["origin"][2])
        assert all(offsets == sorted(offsets) for offsets in by_key.values()), rounds
