"""Topics written by transactional producers, on Apache Kafka (the local stack's broker): aborted records never land,
the offsets that transaction markers and aborted records take leave object keys and commits right, and a run planned
while a transaction is open ends at the partition's last stable offset and lands the rest once it commits."""

from __future__ import annotations

import orjson
from confluent_kafka import Producer

from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.runs import committed_offsets
from tests.s3_reader import landed_records, list_keys, read_json_lines
from tests.transactional import Transactional


def plain_records(bootstrap: str, topic: str, numbers: range, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for n in numbers:
        producer.produce(topic, orjson.dumps({"n": n}), key=str(n).encode(), partition=n % partitions)
    assert producer.flush(30) == 0


def keys_start_at_their_first_record(s3, topic: str, offsets: dict[int, tuple[int, int]]) -> bool:
    """Every object's key names the offset of the first record in it (the offsets of markers and aborted records
    between records named by no key)."""
    for key in list_keys(s3, BUCKET, f"topics/{topic}/"):
        partition, start = (int(part) for part in key.rsplit("/", 1)[1].split(".")[0].split("+")[1:])
        first = read_json_lines(s3, BUCKET, key)[0]["n"]
        if offsets[first] != (partition, start):
            return False
    return True


def test_aborted_transactions_interleaved_with_committed_ones_never_land(
    stack, new_topic, spark, s3, dynamodb, connector, unique
):
    # given two transactional producers writing to both partitions at once, three rounds in which one commits and
    # the other aborts (their records interleaved in each partition, a marker after each transaction)
    config = connector(**{"flush.size": 3})
    topic = new_topic(config, 2)
    committing = Transactional(stack.bootstrap_servers, f"committing-{unique}")
    aborting = Transactional(stack.bootstrap_servers, f"aborting-{unique}")
    kept: list[int] = []
    for round_ in range(3):
        base = round_ * 100
        committing.begin().send(topic, range(base, base + 12), 2)
        aborting.begin().send(topic, range(base + 50, base + 60), 2)
        committing.send(topic, range(base + 12, base + 18), 2)
        committing.commit()
        aborting.abort()
        kept += range(base, base + 18)
    # when a run reads the topic, then another with nothing new
    run_job(config, spark, dynamodb)
    run_job(config, spark, dynamodb)
    # then the committed records landed once each, none of the aborted
    assert sorted(r["n"] for r in landed_records(s3, topic)) == sorted(kept)
    # and each object's key is its first record's offset, and each partition's commit is past its last record
    assert keys_start_at_their_first_record(s3, topic, committing.offsets)
    last = {p: max(o for q, o in committing.offsets.values() if q == p) for p in (0, 1)}
    assert all(offset > last[p] for p, offset in committed_offsets(dynamodb, config).items())


def test_a_run_planned_while_a_transaction_is_open_ends_at_the_last_stable_offset(
    stack, new_topic, spark, s3, dynamodb, connector, unique
):
    # given records, then an open transaction's, then records of another producer after them
    config = connector(**{"flush.size": 1})
    topic = new_topic(config, 1)
    plain_records(stack.bootstrap_servers, topic, range(0, 5), 1)
    open_one = Transactional(stack.bootstrap_servers, f"open-{unique}").begin()
    open_one.send(topic, range(100, 105), 1)
    later = Transactional(stack.bootstrap_servers, f"later-{unique}").begin()
    later.send(topic, range(200, 205), 1)
    later.commit()
    # when a run reads the topic while the transaction is open
    run_job(config, spark, dynamodb)
    # then it lands the records before the open transaction and stops at its first offset (the last stable offset)
    assert sorted(r["n"] for r in landed_records(s3, topic)) == list(range(5))
    assert committed_offsets(dynamodb, config) == {0: 5}
    # and once the transaction commits, the next run lands the rest, once
    open_one.commit()
    run_job(config, spark, dynamodb)
    assert sorted(r["n"] for r in landed_records(s3, topic)) == [*range(5), *range(100, 105), *range(200, 205)]
    assert keys_start_at_their_first_record(
        s3, topic, {**open_one.offsets, **later.offsets, **{n: (0, n) for n in range(5)}}
    )
