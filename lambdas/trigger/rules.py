"""Whether a run started now would close a file: per topic-partition, with the connector's own settings.

A run writes a topic-partition's records only into files that close (the tail stays for the next run), so a run
is worth starting only when some partition would close one. Each rule below is a sufficient condition, the
engine's own rule seen from what the trigger knows (its markers and the engine's OFFSET items):

- `flush-size`: pending offsets >= `flush.size` (the files hold flush.size records and close);
- `scheduled-rotation`: `rotate.schedule.interval.ms` is on, something is pending, and the boundary after the
  partition's last commit (local midnight in `timezone` + k intervals) has passed: the run cuts at its end;
- `wallclock-interval`: `rotate.interval.ms` with the Wallclock extractor, that long since the last commit;
- `record-interval`: `rotate.interval.ms` with the Record extractor, and the pending records span it (newest
  timestamp - first pending timestamp >= interval: the record that goes past it closes the files). Only when
  the first pending record is known (the lowest offset seen is at or past the committed offset), which keeps
  the rule conservative for non-decreasing timestamps. Not for RecordField: the field is inside the value;
- `first-run`: a topic of the connector (or a partition with records) has no committed offset yet: the run
  pins its start (and, with a schedule, writes what it finds). This is how a topic without traffic since the
  deploy still gets its first run, from the idle-flush tick.
Other closing triggers (schema change, partition change, open-file cap) only close files sooner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, tzinfo

from lambdas.trigger.errors import TriggerConfigError
from lambdas.trigger.pending import Committed, Seen, TopicPartition
from sink_engine.errors import ConfigError
from sink_engine.partition.time_buckets import next_rotation_ms, parse_zone

FLUSH_SIZE, SCHEDULED, WALLCLOCK_INTERVAL, RECORD_INTERVAL, FIRST_RUN = (
    "flush-size",
    "scheduled-rotation",
    "wallclock-interval",
    "record-interval",
    "first-run",
)
EXTRACTORS = ("wallclock", "record", "recordfield")


@dataclass(frozen=True)
class Rotation:
    """A connector's file-closing settings, under the connector's own keys in its index entry."""

    flush_size: int
    schedule_ms: int = -1
    interval_ms: int = -1
    extractor: str = "wallclock"
    zone: tzinfo = field(default=UTC, compare=False)

    @classmethod
    def from_entry(cls, connector: str, entry: Mapping) -> Rotation:
        try:
            flush_size = int(entry["flush.size"])
            schedule, interval = int(entry["rotate.schedule.interval.ms"]), int(entry["rotate.interval.ms"])
            extractor, zone = str(entry["timestamp.extractor"]), str(entry["timezone"])
        except (KeyError, TypeError, ValueError) as e:
            raise TriggerConfigError(
                connector,
                "rotation",
                f"needs integer flush.size, rotate.schedule.interval.ms, "
                f"rotate.interval.ms and timestamp.extractor, timezone: {e!r}",
            ) from None
        if flush_size < 1:
            raise TriggerConfigError(connector, "flush.size", f"{flush_size} is not positive")
        if extractor not in EXTRACTORS:
            raise TriggerConfigError(connector, "timestamp.extractor", f"{extractor!r} is not one of {EXTRACTORS}")
        try:
            return cls(flush_size, schedule, interval, extractor, parse_zone(zone))
        except ConfigError as e:  # the engine's rule, so that the trigger reads `timezone` as a run does
            raise TriggerConfigError(connector, e.key, e.reason) from None


def partition_reason(rotation: Rotation, seen: Seen | None, committed: Committed | None, now_ms: int) -> str | None:
    """Why a run started at `now_ms` would close a file of this topic-partition, or None."""
    if seen is None:
        return None
    if committed is None:
        return FIRST_RUN
    pending = seen.next_offset - committed.next_offset
    if pending <= 0:
        return None
    if pending >= rotation.flush_size:
        return FLUSH_SIZE
    last = committed.committed_at_ms
    if rotation.schedule_ms > 0 and now_ms >= next_rotation_ms(last, rotation.schedule_ms, rotation.zone):
        return SCHEDULED
    if rotation.interval_ms > 0 and rotation.extractor == "wallclock" and now_ms - last >= rotation.interval_ms:
        return WALLCLOCK_INTERVAL
    if (
        rotation.interval_ms > 0
        and rotation.extractor == "record"
        and seen.first_offset is not None
        and seen.first_offset >= committed.next_offset
        and seen.newest_ts_ms is not None
        and seen.first_ts_ms is not None
        and seen.newest_ts_ms - seen.first_ts_ms >= rotation.interval_ms
    ):
        return RECORD_INTERVAL
    return None


def closing(
    rotation: Rotation,
    topics: tuple[str, ...],
    seen: Mapping[TopicPartition, Seen],
    committed: Mapping[TopicPartition, Committed],
    now_ms: int,
) -> tuple[str, str] | None:
    """The first reason (and where: `topic` or `topic-partition`) why a run of the connector would close a
    file now, or None. Topics without any committed offset come first (`first-run`)."""
    committed_topics = {topic for topic, _ in committed}
    for topic in topics:
        if topic not in committed_topics:
            return FIRST_RUN, topic
    for tp in sorted(seen):
        reason = partition_reason(rotation, seen[tp], committed.get(tp), now_ms)
        if reason is not None:
            return reason, f"{tp[0]}-{tp[1]}"
    return None


def worth_saving(
    rotation: Rotation, stored: Seen | None, merged: Seen, committed: Committed | None, now_ms: int
) -> bool:
    """Whether a batch's merged marker must be written for later decisions (the tick's, or a batch's of another
    topic): a batch always knows its own newest offset, so a marker is written only when it tells something the
    stored one does not: a first pending record (after a commit), a reason to run that the stored marker did not
    give (kept for the tick when the run cannot start now), or flush.size more offsets (keeps the
    PendingRecords metric within one file of the truth). Two or three writes per partition and file, instead
    of one per partition and batch."""
    if stored is None or merged.first_offset != stored.first_offset:
        return True
    if merged.next_offset - stored.next_offset >= rotation.flush_size:
        return True
    return (
        partition_reason(rotation, merged, committed, now_ms) is not None
        and partition_reason(rotation, stored, committed, now_ms) is None
    )
