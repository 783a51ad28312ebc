"""Clock skew: a run whose clock is a lease period (or more) ahead of or behind the others'.

The lease's expiry is written and judged with each run's own clock (docs/faults.md, "Clocks"), so a skew can let a
run take a lease early or make it wait; it can never let two runs commit: every commit is a transaction
conditional on the lease's epoch, and taking the lease bumps the epoch."""

from __future__ import annotations

import random
import threading
import time

import pytest

from sink_engine.driver.job import now_ms, run_job
from sink_engine.errors import CommitConflictError, LeaseHeldError
from sink_engine.offsets import Leases
from tests.conftest import TABLE
from tests.faults.landed_once import check_exactly_once, produce_numbered
from tests.runs import crash_at

PARTITIONS = 2
LEASE_MS = 2000


class CommitGate:
    """The real DynamoDB client, except that the first commit transaction waits until `open()`: the run that uses
    it is parked at its commit with its files uploaded and its lease held (and renewed)."""

    def __init__(self, client):
        self._client = client
        self.reached, self._opened = threading.Event(), threading.Event()

    def __getattr__(self, name):
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs):
        self.reached.set()
        assert self._opened.wait(60), "the gate was never opened"
        return self._client.transact_write_items(**kwargs)

    def open(self) -> None:
        self._opened.set()


class ParkedRun:
    """run_job on a thread through a CommitGate; `outcome` is its summary or the exception it raised."""

    def __init__(self, config, spark, dynamodb, clock):
        self.gate = CommitGate(dynamodb)
        self.outcome = None
        self._thread = threading.Thread(target=self._run, args=(config, spark, clock))
        self._thread.start()
        assert self.gate.reached.wait(120), f"the run did not reach its commit: {self.outcome!r}"

    def _run(self, config, spark, clock) -> None:
        try:
            self.outcome = run_job(config, spark, self.gate, clock=clock)
        except Exception as e:  # the outcome is checked by the test
            self.outcome = e
            self.gate.reached.set()

    def finish(self):
        self.gate.open()
        self._thread.join(timeout=120)
        return self.outcome


@pytest.fixture
def topic_config(new_topic, connector):
    config = connector(**{"flush.size": 50, "sink.lease.duration.ms": LEASE_MS, "tasks.max": PARTITIONS})
    new_topic(config, PARTITIONS)
    return config


def skewed(offset_ms: int):
    return lambda: now_ms() + offset_ms


def commit_epochs(dynamodb, config) -> set[int]:
    """The lease epochs that wrote the connector's committed offsets."""
    items = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :o)",
        ExpressionAttributeValues={":pk": {"S": config.name}, ":o": {"S": "OFFSET#"}},
        ConsistentRead=True,
    )["Items"]
    return {int(item["epoch"]["N"]) for item in items}


def test_run_a_lease_period_ahead_takes_the_lease_early_and_the_holder_is_fenced(
    stack, spark, s3, dynamodb, topic_config, seed, figures
):
    rng = random.Random(seed)
    config = topic_config
    # given a run with a true clock parked at its commit, files uploaded, lease held and renewed
    produce_numbered(stack.bootstrap_servers, config["topics"][0], 0, 400, PARTITIONS)
    holder = ParkedRun(config, spark, dynamodb, now_ms)
    held = Leases(dynamodb, TABLE, now_ms).describe(config.name)
    # when more records arrive and a run whose clock is at least a lease period ahead starts
    produce_numbered(stack.bootstrap_servers, config["topics"][0], 400, 200, PARTITIONS)
    ahead = LEASE_MS + rng.randint(200, LEASE_MS)
    early = run_job(config, spark, dynamodb, clock=skewed(ahead))
    # then it sees the live lease as expired, takes it (epoch + 1) and commits everything
    assert early.committed and Leases(dynamodb, TABLE, now_ms).describe(config.name)["epoch"] == held["epoch"] + 1
    # and the holder, let go to its commit, is fenced: it commits nothing
    fenced = holder.finish()
    assert isinstance(fenced, CommitConflictError), fenced
    assert commit_epochs(dynamodb, config) == {held["epoch"] + 1}
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, 600)
    figures.update(faults={"clock ahead ms": ahead}, runs=2, exit_codes=[fenced.exit_code, 0], **landed.figures())


def test_run_a_lease_period_behind_holds_a_lease_others_see_expired_and_is_fenced(
    stack, spark, s3, dynamodb, topic_config, seed, figures
):
    rng = random.Random(seed)
    config = topic_config
    produce_numbered(stack.bootstrap_servers, config["topics"][0], 0, 400, PARTITIONS)
    # given a run whose clock is at least a lease period behind, parked at its commit: the expiry it writes
    # (its now + the lease period) is already past on a true clock
    behind = LEASE_MS + rng.randint(200, LEASE_MS)
    late = ParkedRun(config, spark, dynamodb, skewed(-behind))
    late_epoch = Leases(dynamodb, TABLE, now_ms).describe(config.name)["epoch"]
    # when a run with a true clock starts, then it takes the lease at once and commits everything
    on_time = run_job(config, spark, dynamodb)
    assert on_time.committed
    # and the run behind, let go to its commit, is fenced
    fenced = late.finish()
    assert isinstance(fenced, CommitConflictError), fenced
    assert commit_epochs(dynamodb, config) == {late_epoch + 1}
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, 400)
    figures.update(faults={"clock behind ms": behind}, runs=2, exit_codes=[fenced.exit_code, 0], **landed.figures())


@pytest.mark.fault_matrix
@pytest.mark.parametrize("crashed_skew, waiting_skew", [(0, -1), (1, 0)], ids=["waiter_behind", "crashed_ahead"])
def test_skew_makes_a_run_wait_longer_for_a_crashed_runs_lease(
    stack, spark, s3, dynamodb, topic_config, seed, figures, crashed_skew, waiting_skew
):
    """A crashed run's lease lapses a skew late for a run behind it (or for every run, when the crashed run's
    clock was ahead): the cost of a skew is waiting, never a second commit."""
    rng = random.Random(seed)
    config = topic_config
    produce_numbered(stack.bootstrap_servers, config["topics"][0], 0, 400, PARTITIONS)
    skew = LEASE_MS + rng.randint(200, LEASE_MS)
    # given a run that crashed after its uploads, holding the lease
    crash_at("after_upload_before_commit", config, spark, dynamodb, clock=skewed(crashed_skew * skew))
    crashed_at = time.monotonic()
    # when a run starts once the lease period is over on a true clock
    time.sleep(LEASE_MS / 1000 + 0.3)
    waiter_clock = skewed(waiting_skew * skew)
    with pytest.raises(LeaseHeldError):
        run_job(config, spark, dynamodb, clock=waiter_clock)
    # then it is refused until the skew has passed too, and then it lands every record once
    deadline = time.monotonic() + (LEASE_MS + skew) / 1000 + 30
    codes = [LeaseHeldError.exit_code]
    while True:
        try:
            run_job(config, spark, dynamodb, clock=waiter_clock)
            break
        except LeaseHeldError:
            codes.append(LeaseHeldError.exit_code)
            assert time.monotonic() < deadline, "the lease never lapsed"
            time.sleep(0.5)
    waited = time.monotonic() - crashed_at
    assert waited >= (LEASE_MS + skew) / 1000 - 0.5, waited
    landed = check_exactly_once(s3, dynamodb, config, PARTITIONS, 400)
    figures.update(
        faults={"clock skew ms": skew},
        runs=len(codes) + 2,
        exit_codes=[70, *codes, 0],
        waited_s=round(waited, 1),
        **landed.figures(),
    )
