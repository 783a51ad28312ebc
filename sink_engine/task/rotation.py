"""Rotation: when the open files of a topic-partition are closed.

Any trigger closes every open file of the topic-partition, as in the Confluent connector:
- `flush.size`: the open files hold that many records together (checked after a record is added);
- `rotate.interval.ms`: a record's time (by `timestamp.extractor`) is that far past the time of the first
  record in the open files (checked before the record is added);
- `rotate.file.on.partition.change`: a record's encoded partition differs from the previous record's (on
  by itself with `rotate.interval.ms` and a time-based partitioner, as the connector does);
- `partitioner.max.open.files`: a record would open one file more than the cap;
- a schema change (task/schema_gate.py) and a scheduled cut at the end of a range (driver/wall_clock.py).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from sink_engine.records import Partitions


@dataclass(frozen=True)
class RotationPolicy:
    flush_size: int
    interval_ms: int = -1
    on_partition_change: bool = False
    max_open_files: int = 0  # 0: no cap
    extractor: object = None  # partition.timestamps extractor; required when interval_ms > 0

    def with_extractor(self, extractor) -> "RotationPolicy":
        """This policy reading record times with `extractor` when `rotate.interval.ms` is on (built from the
        config by task/settings.py's rotation_policy)."""
        return replace(self, extractor=extractor if self.interval_ms > 0 else None)

    def room(self, open_records: int) -> int:
        """How many more records the open files take before they must be closed."""
        return self.flush_size - open_records

    def timestamps(self, chunk, values) -> list | None:
        """Record times for `rotate.interval.ms`; None when it is off."""
        return self.extractor.extract(chunk, values) if self.interval_ms > 0 else None

    def first_cut(self, state: "OpenState", partitions: Partitions, timestamps: list | None, start: int,
                  stop: int) -> int:
        """The first position in [start, stop) before which the open files must be closed; `stop` when none.
        `state` describes the open files and is not changed."""
        shared, each = partitions.shared, partitions.each
        single = each is None
        if timestamps is None and not self.on_partition_change and not self.max_open_files:
            return stop
        if single and timestamps is None:
            fires = state.records and self._fires(state, shared, state.last_partition, None, None, start, set())
            return start if fires else stop
        if timestamps is None and not self.on_partition_change and \
                len(state.open_partitions.keys() | set(each[start:stop])) <= self.max_open_files:
            return stop  # only the cap could fire, and these records stay under it
        base, last, records, added = state.base_timestamp, state.last_partition, state.records, set()
        for i in range(start, stop):
            partition = shared if single else each[i]
            if records and self._fires(state, partition, last, base, timestamps, i, added):
                return i
            if timestamps is not None and base is None:
                base = timestamps[i]
            if partition not in state.open_partitions:
                added.add(partition)
            last, records = partition, records + 1
        return stop

    def _fires(self, state: "OpenState", partition: str, last: str, base, timestamps, i: int, added: set) -> bool:
        if timestamps is not None and timestamps[i] - base >= self.interval_ms:
            return True
        if self.on_partition_change and partition != last:
            return True
        opened = partition in state.open_partitions or partition in added
        return bool(self.max_open_files) and not opened and \
            len(state.open_partitions) + len(added) >= self.max_open_files


@dataclass
class OpenState:
    """What rotation needs to know of a topic-partition's open files."""

    open_partitions: dict  # encoded partition -> open file (the writer's own map)
    records: int = 0
    base_timestamp: int | None = None
    last_partition: str | None = None

    def added(self, partitions: Partitions, timestamps: list | None, start: int, stop: int) -> None:
        """Records [start, stop) went into the open files."""
        self.records += stop - start
        if timestamps is not None and self.base_timestamp is None:
            self.base_timestamp = timestamps[start]
        self.last_partition = partitions.at(stop - 1)

    def reset(self) -> None:
        self.records, self.base_timestamp, self.last_partition = 0, None, None
