"""Pure bookkeeping of pending records per topic-partition: what a batch adds, what a commit removes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Seen:
    """What the trigger has seen of one topic-partition: the offset after the newest record, and the oldest
    record not yet committed (offset and timestamp), or None when nothing is pending."""

    next_offset: int
    oldest_offset: int | None = None
    oldest_ts_ms: int | None = None


@dataclass(frozen=True)
class Pending:
    """A connector's backlog as far as the trigger knows: records past the committed offsets, oldest timestamp."""

    records: int
    oldest_ts_ms: int | None

    def age_ms(self, now_ms: int) -> int:
        return 0 if self.oldest_ts_ms is None else max(0, now_ms - self.oldest_ts_ms)


def summarize(records: Iterable[tuple[str, int, int, int]]) -> dict[tuple[str, int], Seen]:
    """(topic, partition, offset, timestamp_ms) records -> per topic-partition newest offset + 1 and oldest record."""
    seen: dict[tuple[str, int], Seen] = {}
    for topic, partition, offset, ts in records:
        old = seen.get((topic, partition))
        if old is None:
            seen[(topic, partition)] = Seen(offset + 1, offset, ts)
            continue
        oldest = (old.oldest_offset, old.oldest_ts_ms) if old.oldest_offset <= offset else (offset, ts)
        seen[(topic, partition)] = Seen(max(old.next_offset, offset + 1), *oldest)
    return seen


def merge(stored: Seen | None, batch: Seen | None, committed: int) -> Seen | None:
    """Combine what was stored with a batch, dropping what `committed` (the job's next offset) has covered."""
    candidates = [s for s in (stored, batch) if s is not None]
    if not candidates:
        return None
    next_offset = max(s.next_offset for s in candidates)
    live = [s for s in candidates if s.oldest_offset is not None and s.oldest_offset >= committed]
    if next_offset <= committed:
        return Seen(next_offset)
    if not live:
        # the records between `committed` and what we saw were delivered before the marker existed
        return Seen(next_offset, committed, min(s.oldest_ts_ms for s in candidates if s.oldest_ts_ms is not None))
    oldest = min(live, key=lambda s: s.oldest_offset)
    return Seen(next_offset, oldest.oldest_offset, oldest.oldest_ts_ms)


def backlog(seen: dict[tuple[str, int], Seen], committed: dict[tuple[str, int], int]) -> Pending:
    """Total records past the committed offsets and the oldest pending timestamp over all partitions."""
    records, oldest = 0, None
    for tp, s in seen.items():
        behind = s.next_offset - committed.get(tp, 0)
        if behind <= 0 or s.oldest_ts_ms is None:
            continue
        records += behind
        oldest = s.oldest_ts_ms if oldest is None else min(oldest, s.oldest_ts_ms)
    return Pending(records, oldest)


@dataclass(frozen=True)
class Thresholds:
    min_pending_records: int
    max_pending_age_ms: int


def should_start(pending: Pending, now_ms: int, thresholds: Thresholds) -> str | None:
    """The reason to start a run now ("records" or "age"), or None to wait."""
    if pending.records >= thresholds.min_pending_records:
        return "records"
    if pending.records > 0 and pending.age_ms(now_ms) >= thresholds.max_pending_age_ms:
        return "age"
    return None
