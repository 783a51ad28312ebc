"""The short form of `make bench-peers` (devtools/bench_peers.py), so that the bench cannot rot: each of sink-engine's
modes and each peer drains a backlog of the bench's records, and every record lands exactly once, read back by
real readers (GetObject of each JSON object; pyiceberg's scan of each table). Nothing here is timed. (The steady
freshness scenario is left to the bench: on this shared machine it took 30-120 s a side.)"""

from __future__ import annotations

import pytest

from devtools import bench_peers
from devtools.bench_peers import BUCKET, PARTITIONS, RECORD_BYTES, TABLE, Bench

RECORDS = 16_000  # (2,000 a partition)


@pytest.fixture(scope="module")
def bench(stack, spark, tmp_path_factory):
    return Bench(stack, spark, stack.create_store(BUCKET, TABLE), tmp_path_factory.mktemp("peers"))


def test_the_records_are_of_the_issues_size():
    assert {len(bench_peers.event_value(n)) for n in (0, 9, 12_345, 1_999_999)} == {RECORD_BYTES}


@pytest.mark.parametrize("target", ["s3", "iceberg"])
@pytest.mark.parametrize("mode", ["bounded", "continuous"])
def test_each_of_our_modes_lands_every_record_once(bench, target, mode):
    # when sink-engine drains the backlog
    row = bench_peers.backlog_ours(bench, target, mode, RECORDS)
    # then every record reads back once, in files the row counts
    assert row.landed is not None
    assert sorted(row.landed()) == list(range(RECORDS))
    assert row.files >= PARTITIONS and row.cpu_s > 0 and row.rss_mb > 0


def test_the_iceberg_peer_lands_every_record_once(bench):
    # when Iceberg's Kafka Connect sink drains the backlog
    row = bench_peers.backlog_peer(bench, RECORDS)
    # then every record reads back once from its table, and its JVM's CPU and memory were measured
    assert row.landed is not None
    assert sorted(row.landed()) == list(range(RECORDS))
    assert row.files >= 1 and row.cpu_s > 0 and row.rss_mb > 0
