"""Pure bookkeeping of pending records per topic-partition: what a batch adds, what a commit removes.

The trigger counts offsets, not records: pending = newest offset seen + 1 - committed next offset. On a topic
with transaction markers or compaction gaps this overcounts; a run that then closes nothing counts as a failed
run for the backoff (runs.py), so an overcount cannot start runs back to back.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import overload

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Seen:
    """What the trigger has seen of one topic-partition: the offset after the newest record; the lowest-offset
    record past the committed offset when it was seen (offset, timestamp) and the newest timestamp from it on,
    or None when nothing was pending."""

    next_offset: int
    first_offset: int | None = None
    first_ts_ms: int | None = None
    newest_ts_ms: int | None = None


@dataclass(frozen=True)
class Committed:
    """The engine's OFFSET item of a topic-partition: its next offset and when it was committed."""

    next_offset: int
    committed_at_ms: int


@dataclass(frozen=True)
class Pending:
    """A connector's backlog as far as the trigger knows: offsets past the committed ones, oldest timestamp, and
    the offsets past the committed one in each topic-partition that has some (what sizes a run: sizing.py)."""

    records: int
    oldest_ts_ms: int | None
    behind: tuple[int, ...] = ()

    def age_ms(self, now_ms: int) -> int:
        return 0 if self.oldest_ts_ms is None else max(0, now_ms - self.oldest_ts_ms)


def summarize(
    records: Iterable[Mapping], committed: Mapping[TopicPartition, int], topics: Container[str]
) -> dict[TopicPartition, Seen]:
    """MSK event records (dicts with topic, partition, offset, timestamp) of `topics` at or past their committed
    offset -> per topic-partition: newest offset + 1, lowest-offset record, newest timestamp. One pass."""
    acc: dict[TopicPartition, list] = {}
    for record in records:
        topic = record["topic"]
        if topic not in topics:
            continue
        tp, offset = (topic, record["partition"]), record["offset"]
        if offset < committed.get(tp, 0):
            continue
        ts, seen = record["timestamp"], acc.get(tp)
        if seen is None:
            acc[tp] = [offset, ts, offset, ts]
            continue
        if offset < seen[0]:
            seen[0], seen[1] = offset, ts
        elif offset > seen[2]:
            seen[2] = offset
        if ts > seen[3]:
            seen[3] = ts
    return {tp: Seen(s[2] + 1, s[0], s[1], s[3]) for tp, s in acc.items()}


def _first(seen: Seen) -> int:
    assert seen.first_offset is not None  # a marker with a pending record
    return seen.first_offset


def _newest(seen: Seen) -> int:
    assert seen.newest_ts_ms is not None  # set with first_offset
    return seen.newest_ts_ms


@overload
def merge(stored: Seen | None, batch: Seen, committed: int) -> Seen: ...


@overload
def merge(stored: Seen, batch: Seen | None, committed: int) -> Seen: ...


@overload
def merge(stored: Seen | None, batch: Seen | None, committed: int) -> Seen | None: ...


def merge(stored: Seen | None, batch: Seen | None, committed: int) -> Seen | None:
    """Combine the stored marker with a batch (whose records are all at or past `committed`), dropping what the
    committed offset covers. When the commit passed every record known by offset, the older first record is
    kept for the age only (its offset below `committed` says so) until a batch brings a record past it."""
    candidates = [s for s in (stored, batch) if s is not None]
    if not candidates:
        return None
    next_offset = max(s.next_offset for s in candidates)
    if next_offset <= committed:
        return Seen(next_offset)
    known = [s for s in candidates if s.first_offset is not None]
    live = [s for s in known if _first(s) >= committed]
    if live:
        first = min(live, key=_first)
        return Seen(next_offset, first.first_offset, first.first_ts_ms, max(map(_newest, live)))
    if known:
        first = min(known, key=_first)
        return Seen(next_offset, first.first_offset, first.first_ts_ms, first.newest_ts_ms)
    return Seen(next_offset)


def backlog(seen: Mapping[TopicPartition, Seen], committed: Mapping[TopicPartition, Committed]) -> Pending:
    """Offsets past the committed ones, in all and per partition, and the oldest pending timestamp over all
    partitions."""
    behind, oldest = [], None
    for tp, s in sorted(seen.items()):
        done = committed.get(tp)
        ahead = s.next_offset - (done.next_offset if done else 0)
        if ahead <= 0:
            continue
        behind.append(ahead)
        if s.first_ts_ms is not None:
            oldest = s.first_ts_ms if oldest is None else min(oldest, s.first_ts_ms)
    return Pending(sum(behind), oldest, tuple(behind))
