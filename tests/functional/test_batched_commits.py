"""Offsets committed many partitions per transaction (issue 22), against moto's DynamoDB: the first partition alone,
then up to 99 with one lease check; a transaction is all or nothing, a lost condition names its partition, and a
retry that meets the transaction's own write is recognised."""

from __future__ import annotations

import pytest

from sink_engine.driver.job import now_ms
from sink_engine.errors import CommitConflictError
from sink_engine.model import PartitionRange, TaskResult, TopicPartition
from sink_engine.offsets import Leases, OffsetStore
from sink_engine.offsets.store import MAX_COMMITS
from sink_engine.run.committer import commit_results
from tests.conftest import TABLE


class Recording:
    """The DynamoDB client, recording the size of every TransactWriteItems; `lose_answers` transactions are applied
    and then sent again, as the SDK does when an answer is lost (the retry fails its conditions)."""

    def __init__(self, client, lose_answers: int = 0):
        self._client, self.sizes, self.lose_answers = client, [], lose_answers

    def transact_write_items(self, **request):
        self.sizes.append(len(request["TransactItems"]))
        if self.lose_answers:
            self.lose_answers -= 1
            self._client.transact_write_items(**request)
        return self._client.transact_write_items(**request)

    def __getattr__(self, name):
        return getattr(self._client, name)


def results(topic: str, partitions: int, start: int | None = None, end: int = 10) -> list[TaskResult]:
    return [
        TaskResult(range=PartitionRange(topic, p, start or 0, end, start), next_offset=end) for p in range(partitions)
    ]


@pytest.fixture
def lease(dynamodb, unique):
    connector = f"conn-{unique}"
    token = Leases(dynamodb, TABLE, now_ms).acquire(connector, "me", 60_000)
    return connector, token


def committed(dynamodb, connector: str) -> dict[int, int]:
    return {tp.partition: c.next_offset for tp, c in OffsetStore(dynamodb, TABLE, now_ms).committed(connector).items()}


def test_many_partitions_commit_in_transactions_of_up_to_99(dynamodb, lease, unique):
    connector, token = lease
    recording = Recording(dynamodb)
    # when 250 partitions are committed
    done = commit_results(OffsetStore(recording, TABLE, now_ms), token, results(f"t-{unique}", 250))
    # then the first went alone, the others 99 at a time, each transaction with its lease check
    assert recording.sizes == [2, MAX_COMMITS + 1, MAX_COMMITS + 1, 51 + 1]
    assert len(done) == 250 and committed(dynamodb, connector) == {p: 10 for p in range(250)}


def test_a_lost_condition_cancels_its_whole_transaction_and_names_its_partition(dynamodb, lease, unique):
    connector, token = lease
    topic, store = f"t-{unique}", OffsetStore(dynamodb, TABLE, now_ms)
    commit_results(store, token, results(topic, 150))
    # given partition 120 was moved on by another commit since this plan (from 10 to 15)
    store.commit(token, TopicPartition(topic, 120), 10, 15, None)
    # when the next 150 commits are sent (120 in the second transaction: partitions 100 to 149)
    with pytest.raises(CommitConflictError) as raised:
        commit_results(store, token, results(topic, 150, start=10, end=20))
    # then the error names partition 120; the transactions before it are committed, nothing of its own is
    assert (raised.value.topic, raised.value.partition, raised.value.expected_start) == (topic, 120, 10)
    assert committed(dynamodb, connector) == {
        **{p: 20 for p in range(100)},
        **{p: 10 for p in range(100, 150)},
        120: 15,
    }


def test_a_lost_lease_names_the_first_partition_of_the_transaction(dynamodb, lease, unique):
    connector, token = lease
    leases = Leases(dynamodb, TABLE, now_ms)
    # given the lease went to another run (released, then taken: a new epoch)
    leases.release(token)
    leases.acquire(connector, "another", 60_000)
    # when this run commits, then its first transaction fails on the lease check, naming its partition
    with pytest.raises(CommitConflictError) as raised:
        commit_results(OffsetStore(dynamodb, TABLE, now_ms), token, results(f"t-{unique}", 5))
    assert raised.value.partition == 0 and committed(dynamodb, connector) == {}


def test_a_retried_transaction_that_meets_its_own_write_goes_on(dynamodb, lease, unique):
    connector, token = lease
    # given the answer to every transaction is lost after DynamoDB applied it, and the retry fails its conditions
    recording = Recording(dynamodb, lose_answers=3)
    # when 120 partitions are committed
    done = commit_results(OffsetStore(recording, TABLE, now_ms), token, results(f"t-{unique}", 120))
    # then reading back shows each transaction was this run's own: every partition is committed, once
    assert len(done) == 120 and committed(dynamodb, connector) == {p: 10 for p in range(120)}
