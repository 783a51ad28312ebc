"""Per topic-partition status: committed offset, end offset, lag, last commit time, last file, and the counts of
dead letters and of skipped offsets (`skipped.expired`: deleted from Kafka before they were read)."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.model import CommittedOffset, TopicPartition
from sink_engine.offsets import OffsetStore
from sink_engine.source.metadata import partition_watermarks
from sink_engine.source.settings import SourceSettings


@dataclass(frozen=True)
class PartitionStatus:
    tp: TopicPartition
    committed: int | None
    end_offset: int
    lag: int
    committed_at_ms: int | None
    last_file: str | None
    dead_letters: dict  # error class -> records sent to the dead-letter queue, over all runs
    skipped: dict  # reason -> offsets committed past in no object or row and no dead letter, over all runs


def partition_status(config: SinkConfig, store: OffsetStore) -> list[PartitionStatus]:
    """Lag counts the records from the committed offset (or the low watermark when none) to the end. The last commit
    time is None while no commit settled a record: a run that closed no file still pins a new partition's start."""
    marks = partition_watermarks(SourceSettings.from_config(config))
    committed = store.committed(config.name)
    rows = []
    for tp in marks:
        low, high = marks[tp]
        entry = committed.get(tp)
        position = max(entry.next_offset, low) if entry else low
        rows.append(
            PartitionStatus(
                tp,
                entry.next_offset if entry else None,
                high,
                max(0, high - position),
                entry.committed_at_ms if entry and _settled_any(entry) else None,
                entry.last_file if entry else None,
                entry.dead_letters if entry else {},
                entry.skipped if entry else {},
            )
        )
    return rows


def _settled_any(entry: CommittedOffset) -> bool:
    """Whether the partition's commits moved past where its first range started (unknown for items older than
    `first_offset`: assumed so)."""
    return entry.first_offset is None or entry.next_offset != entry.first_offset or entry.last_file is not None
