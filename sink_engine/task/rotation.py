"""Rotation: when the open files of a topic-partition are closed.

Any trigger closes every open file of the topic-partition, as in the Confluent connector:
- `flush.size`: the open files hold that many records together (checked after a record is added);
- `rotate.interval.ms`: a record's time (by `timestamp.extractor`) is that far past the time of the first
  record in the open files (checked before the record is added);
- `rotate.file.on.partition.change` (default true, counted only with `rotate.interval.ms` and a time-based
  partitioner, as in the connector): a record's encoded partition differs from the previous record's, but for a
  move to or from the tombstone partition;
- `partitioner.max.open.files`: a record would open one file more than the cap;
- a schema change (target/s3_objects/schema_gate.py) and a scheduled cut at the end of a range (run/wall_clock.py).

With files separated by schema (`sink.schema.files=separate` under `schema.compatibility=NONE`: `lane_cut`), the
open files of each schema (a lane) close on their own when the lane's records reach `flush.size`. Every other
trigger closes the files of every lane, as above (`rotate.interval.ms` from the first record taken since no file
was open, a partition change from the previous record of any lane, the cap counting every lane's files), and so
does a span bound (`span_limit`): these keep the moments when no file is open, where a run can start, close
together.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from sink_engine.partition.timestamps import TimestampExtractor
from sink_engine.records import EncodedPartition, Partitions, RecordChunk, ValueColumn

ALL = "*"  # lane_cut: close the files of every lane
SPAN_FACTOR = 2  # span_limit: records taken since no file was open, per flush.size and per lane


@dataclass(frozen=True)
class RotationPolicy:
    flush_size: int
    interval_ms: int = -1
    on_partition_change: bool = False
    max_open_files: int = 0  # 0: no cap
    extractor: TimestampExtractor | None = None  # required when interval_ms > 0
    tombstone_partition: str | None = None  # behavior.on.null.values=write: moving to or from it is no change

    def with_extractor(self, extractor: TimestampExtractor) -> RotationPolicy:
        """This policy reading record times with `extractor` when `rotate.interval.ms` is on (built from the
        config by task/settings.py's rotation_policy)."""
        return replace(self, extractor=extractor if self.interval_ms > 0 else None)

    def room(self, open_records: int) -> int:
        """How many more records the open files take before they must be closed."""
        return self.flush_size - open_records

    def timestamps(self, chunk: RecordChunk, values: ValueColumn) -> list | None:
        """Record times for `rotate.interval.ms`; None when it is off."""
        if self.interval_ms <= 0:
            return None
        assert self.extractor is not None, "rotate.interval.ms reads record times with an extractor"
        return self.extractor.extract(chunk, values)

    def first_cut(
        self, state: OpenState, partitions: Partitions, timestamps: list | None, start: int, stop: int
    ) -> int:
        """The first position in [start, stop) before which the open files must be closed; `stop` when none.
        `state` describes the open files and is not changed."""
        shared, each = partitions.shared, partitions.each
        if timestamps is None and not self.on_partition_change and not self.max_open_files:
            return stop
        if timestamps is None:
            if each is None:
                fires = state.records and self._fires(state, shared, state.last_partition, None, None, start, set())
                return start if fires else stop
            if (
                not self.on_partition_change
                and len(state.open_partitions.keys() | set(each[start:stop])) <= self.max_open_files
            ):
                return stop  # only the cap could fire, and these records stay under it
        base, last, records = state.base_timestamp, state.last_partition, state.records
        added: set[EncodedPartition] = set()
        for i in range(start, stop):
            partition = shared if each is None else each[i]
            if records and self._fires(state, partition, last, base, timestamps, i, added):
                return i
            if timestamps is not None and base is None:
                base = timestamps[i]
            if partition not in state.open_partitions:
                added.add(partition)
            last, records = partition, records + 1
        return stop

    def span_limit(self, lanes: int) -> int:
        """Records taken since no file was open at which the files of every lane are closed, `lanes` lanes having
        taken records since then (lanes interleaved evenly fill their files well within it; one lane alone never
        reaches it)."""
        return SPAN_FACTOR * self.flush_size * lanes

    def lane_cut(
        self,
        lanes: dict,
        window: Window,
        keys: list,
        partitions: Partitions,
        timestamps: list | None,
        taken: int,
        start: int,
        stop: int,
    ) -> tuple[int, str | None, bool]:
        """The first trigger among records [start, stop), `keys` giving each record's lane, `lanes` the lanes
        holding open records (lane key -> OpenState), `window` the records taken since no file was open (neither
        is changed) and `taken` the records taken so far. Returns (end, close, after): add records [start, end),
        then close the files of lane `close` (of every lane when ALL), after record end - 1 when `after`, else
        before record `end`; `close` is None when no trigger fires (end == stop)."""
        shared, each = partitions.shared, partitions.each
        views: dict = {}
        files = sum(len(state.open_partitions) for state in lanes.values())
        first, base, last, seen = window.first, window.base, window.last, set(window.lanes)
        for i in range(start, stop):
            key, partition = keys[i], shared if each is None else each[i]
            view = views.get(key)
            if view is None:
                view = views[key] = _LaneView(lanes.get(key))
            if first is not None and (
                timestamps is not None
                and timestamps[i] - base >= self.interval_ms
                or self._changes(partition, last)
                or taken - first >= self.span_limit(len(seen) + (key not in seen))
            ):
                return i, ALL, False
            opens = not view.holds(partition)
            if opens and self.max_open_files and files >= self.max_open_files:
                return i, ALL, False
            view.add(partition, opens)
            if first is None:
                first, base = taken, None if timestamps is None else timestamps[i]
            files, taken, last = files + opens, taken + 1, partition
            seen.add(key)
            if view.records >= self.flush_size:
                return i + 1, key, True
        return stop, None, False

    def _fires(
        self,
        state: OpenState,
        partition: EncodedPartition,
        last: EncodedPartition | None,
        base: int | None,
        timestamps: list | None,
        i: int,
        added: set,
    ) -> bool:
        if timestamps is not None and base is not None and timestamps[i] - base >= self.interval_ms:
            return True
        if self._changes(partition, last):
            return True
        opened = partition in state.open_partitions or partition in added
        return (
            bool(self.max_open_files) and not opened and len(state.open_partitions) + len(added) >= self.max_open_files
        )

    def _changes(self, partition: EncodedPartition, last: EncodedPartition | None) -> bool:
        """A partition change that closes the open files: not a move to or from the tombstone partition, as the
        connector suppresses those (TopicPartitionWriter.shouldRotateOnPartitionChangeWithTombstoneCheck)."""
        if not self.on_partition_change or partition == last:
            return False
        tombstones = self.tombstone_partition
        return tombstones is None or not (_holds(partition, tombstones) or _holds(last, tombstones))


def _holds(partition: EncodedPartition | None, name: str) -> bool:
    """Whether an encoded partition (a path, or a routed topic's (topic, path)) is the partition `name`."""
    return partition == name or isinstance(partition, tuple) and partition[-1] == name


@dataclass
class OpenState:
    """What rotation needs to know of a topic-partition's open files."""

    open_partitions: dict  # encoded partition -> open file (the writer's own map)
    records: int = 0
    base_timestamp: int | None = None
    last_partition: EncodedPartition | None = None

    def added(self, partitions: Partitions, timestamps: list | None, first: int, last: int, count: int) -> None:
        """`count` records, the first at position `first` and the last at `last`, went into the open files."""
        self.records += count
        if timestamps is not None and self.base_timestamp is None:
            self.base_timestamp = timestamps[first]
        self.last_partition = partitions.at(last)


@dataclass
class Window:
    """The records a writer took since no file was open (`lane_cut`): the count of records taken before the first
    of them, the first's time (with rotate.interval.ms), the last's encoded partition, and their lanes."""

    first: int | None = None
    base: int | None = None
    last: EncodedPartition | None = None
    lanes: set = field(default_factory=set)

    def took(self, taken: int, base: int | None, last: EncodedPartition, lanes: Iterable[object]) -> None:
        """Records went to `lanes`: `taken` were taken before them, the first at time `base`, the last in `last`."""
        if self.first is None:
            self.first, self.base = taken, base
        self.last = last
        self.lanes.update(lanes)


class _LaneView:
    """`lane_cut`'s view of a lane: its OpenState (None for a lane without open files) and what it would add
    before the first trigger."""

    __slots__ = ("state", "records", "added")

    def __init__(self, state: OpenState | None):
        self.state = state
        self.added: set[EncodedPartition] = set()
        self.records = state.records if state is not None else 0

    def holds(self, partition: EncodedPartition) -> bool:
        return partition in self.added or self.state is not None and partition in self.state.open_partitions

    def add(self, partition: EncodedPartition, opens: bool) -> None:
        if opens:
            self.added.add(partition)
        self.records += 1
