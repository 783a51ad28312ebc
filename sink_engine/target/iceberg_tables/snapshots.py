"""What a connector's snapshots record in their summaries, and how a run reads it back (no catalog calls here).

Every snapshot a run commits holds `sink-engine.connector`, `.epoch`, `.commit-id` and `.offsets` (each
topic-partition's committed start and next offset, as the offsets commit after it writes them). A table that records
are routed to by a field (`iceberg.tables.dynamic-enabled`) also holds `sink-engine.written-below`: per
topic-partition, the offset below which every record of it routed to this table is in the table, carried forward
from the connector's previous snapshot of the table, so that a rerun skips what a crashed run committed to this
table before its others (target/iceberg_tables/routing.py).
"""

from __future__ import annotations

import json

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot, Summary

from sink_engine.model import TopicPartition

CONNECTOR, EPOCH, COMMIT_ID, OFFSETS, WRITTEN_BELOW = (
    f"sink-engine.{name}" for name in ("connector", "epoch", "commit-id", "offsets", "written-below")
)


def newest_of_connector(table: Table | None, connector: str) -> Snapshot | None:
    """The connector's snapshot with the highest sequence number that the table's metadata still holds."""
    ours = [
        s for s in (table.metadata.snapshots if table else []) if s.summary and s.summary.get(CONNECTOR) == connector
    ]
    return max(ours, key=lambda s: s.sequence_number or 0, default=None)  # None: pyiceberg's initial, 0


def summary_of(snapshot: Snapshot) -> Summary:
    """The summary of one of the connector's snapshots (every one has one: newest_of_connector finds them by it)."""
    assert snapshot.summary is not None
    return snapshot.summary


def snapshot_offsets(snapshot: Snapshot) -> list[dict]:
    """The topic-partitions a snapshot committed: topic, partition, start (None: first commit), next, dead_letters
    (error class -> count), dlq_scan_from and skipped (reason -> count; absent from older snapshots), as the offsets
    commit after it would have written them."""
    offsets = summary_of(snapshot)[OFFSETS]
    assert offsets is not None  # every commit of the connector writes them
    return json.loads(offsets)


def written_below(snapshot: Snapshot | None) -> dict[TopicPartition, int]:
    """A routed table's `sink-engine.written-below` (empty for none, or a snapshot without it)."""
    recorded = summary_of(snapshot).get(WRITTEN_BELOW) if snapshot is not None else None
    return {TopicPartition(e["topic"], e["partition"]): e["below"] for e in json.loads(recorded or "[]")}


def written_below_json(marks: dict[TopicPartition, int]) -> str:
    return json.dumps(
        [{"topic": tp.topic, "partition": tp.partition, "below": below} for tp, below in sorted(marks.items())]
    )
