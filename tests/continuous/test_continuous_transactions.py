"""`sink-engine run --continuous` over a topic written by transactional producers, on Apache Kafka: committed and
aborted transactions interleaved over two partitions while the run is up, one of them held open across several of the
run's cycles: no aborted record lands, the open one's records land once after it commits, every object's key is its
first record's offset."""

from __future__ import annotations

import time

from devtools.producer import create_topic
from tests.continuous.runs import kill_group, start_continuous, stop, wait_for
from tests.faults.landed_once import write_config
from tests.functional.test_transactional_topics import keys_start_at_their_first_record
from tests.s3_reader import landed_records
from tests.transactional import Transactional

LEASE_MS = 8000
SCHEDULE_MS = 1000


def test_a_continuous_run_lands_committed_transactions_once_and_no_aborted_record(
    stack, connector, tmp_path, s3, unique
):
    # given a continuous run over a topic of two partitions, closing files on a one-second schedule
    config = connector(
        **{
            "flush.size": 1000,
            "rotate.schedule.interval.ms": SCHEDULE_MS,
            "tasks.max": 1,
            "sink.lease.duration.ms": LEASE_MS,
        }
    )
    topic = config["topics"][0]
    create_topic(stack.bootstrap_servers, topic, 2)
    run = start_continuous(write_config(config, tmp_path / "connector.json"))
    try:
        # when a transaction is opened and held while others commit and abort around it, over several cycles
        held = Transactional(stack.bootstrap_servers, f"held-{unique}").begin()
        held.send(topic, range(1000, 1010), 2)
        committing = Transactional(stack.bootstrap_servers, f"committing-{unique}")
        aborting = Transactional(stack.bootstrap_servers, f"aborting-{unique}")
        for round_ in range(4):
            base = round_ * 100
            committing.begin().send(topic, range(base, base + 20), 2)
            aborting.begin().send(topic, range(base + 50, base + 60), 2)
            committing.commit()
            aborting.abort()
            time.sleep(SCHEDULE_MS / 1000)
        # then nothing after the open transaction's first offset (both partitions' first) lands while it is open: the
        # last stable offset holds the run
        time.sleep(3 * SCHEDULE_MS / 1000)
        assert landed_records(s3, topic) == [], "records past the open transaction landed"
        # and once it commits, everything committed lands
        held.commit()
        expected = sorted([*range(1000, 1010), *(n for r in range(4) for n in range(r * 100, r * 100 + 20))])
        wait_for(lambda: sorted(r["n"] for r in landed_records(s3, topic)) == expected, 90, "the committed records")
        code, _, err = stop(run, LEASE_MS)
        assert code == 0, err[-3000:]
    finally:
        if run.poll() is None:
            kill_group(run)
    # each once, none aborted, and every object named by its first record's offset
    assert sorted(r["n"] for r in landed_records(s3, topic)) == expected
    assert keys_start_at_their_first_record(s3, topic, {**held.offsets, **committing.offsets})
