"""TopicPartitionWriter: routes converted records of one topic-partition into open files and closes
them on rotation. Closed files are uploaded under deterministic keys; the tail stays unwritten."""
from __future__ import annotations

from dataclasses import dataclass, field

from sink_engine import events
from sink_engine.convert.base import ValueColumn
from sink_engine.format.base import FileContext, Format
from sink_engine.model import ClosedFile
from sink_engine.records import RecordChunk
from sink_engine.rotation import OpenState, RotationPolicy
from sink_engine.rotation.schema_gate import SchemaGate
from sink_engine.sidecars import Sidecars
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import file_tags
from sink_engine.storage.uploader import Uploader


@dataclass
class OpenFile:
    encoded_partition: str
    start_offset: int
    last_offset: int = -1
    record_count: int = 0
    columns: list = field(default_factory=list)
    offsets: list = field(default_factory=list)

    def add(self, offsets: list, values: ValueColumn) -> None:
        self.last_offset = offsets[-1]
        self.record_count += len(offsets)
        self.offsets.extend(offsets)
        self.columns.append(values.without_documents())


class TopicPartitionWriter:
    """Contract: after `write` calls in offset order, `closed` lists the uploaded files and
    `next_offset` is the first offset not in any of them (records from there on are not written)."""

    def __init__(self, topic: str, partition: int, start_offset: int, fmt: Format, naming: ObjectNaming,
                 rotation: RotationPolicy, uploader: Uploader, schema_gate: SchemaGate | None = None,
                 tombstone_partition: str = "tombstone", sidecars: Sidecars | None = None):
        self.topic, self.partition = topic, partition
        self._sidecars = sidecars or Sidecars()
        self.tombstone_partition = tombstone_partition
        self._gate = schema_gate or SchemaGate("none", topic, partition)
        self.next_offset = start_offset
        self.closed: list[ClosedFile] = []
        self._fmt, self._naming, self._rotation, self._uploader = fmt, naming, rotation, uploader
        self._open: dict[str, OpenFile] = {}
        self._open_records = 0
        self._state = OpenState(self._open)

    def write(self, chunk: RecordChunk, values: ValueColumn, partitions, timestamps: list | None = None) -> None:
        """Add converted records; `partitions` is one encoded partition for all, or one per record;
        `timestamps` (record times for rotate.interval.ms) default to the rotation policy's extractor."""
        position = 0
        timestamps = timestamps if timestamps is not None else self._rotation.timestamps(chunk, values)
        while position < len(chunk):
            stop = min(len(chunk), position + self._rotation.room(self._open_records))
            stop = self._rotation.first_cut(self._state, partitions, timestamps, position, stop)
            if stop == position:  # record time, partition change or the open-file cap closes the open files
                self.close_all(next_offset=chunk.offsets[position])
                continue
            stop, admitted = self._gate.admit(chunk.offsets, values, partitions, position, stop, self._open_records > 0)
            if stop == position:  # a schema change closes the open files (schema.compatibility)
                self.close_all(next_offset=chunk.offsets[position])
                continue
            self._add(chunk.offsets[position:stop], admitted, partitions, position, stop)
            self._state.added(partitions, timestamps, position, stop)
            self._open_records += stop - position
            position = stop
            if self._rotation.room(self._open_records) == 0:
                self.close_all(next_offset=chunk.offsets[stop - 1] + 1)

    def write_tombstones(self, chunk: RecordChunk) -> None:
        """Tombstones (behavior.on.null.values=write): files under the tombstone partition, one JSON null per
        record; their time for rotate.interval.ms is the Kafka record time."""
        stamps = chunk.timestamps if self._rotation.interval_ms > 0 else None
        self.write(chunk, ValueColumn("json", [b"null"] * len(chunk)), self.tombstone_partition, stamps)

    @property
    def first_open_offset(self) -> int | None:
        """Offset of the first record in an open (unwritten) file; None when no file is open."""
        return min((f.start_offset for f in self._open.values()), default=None)

    @property
    def last_added_offset(self) -> int:
        """Offset of the last record added (open or closed files); below it every record written was added."""
        return max((f.last_offset for f in self._open.values()), default=self.next_offset - 1)

    def close_all(self, next_offset: int) -> None:
        """Encode and upload every open file; records before `next_offset` are then all in closed files."""
        for open_file in self._open.values():
            context = FileContext(self.topic, self.partition, open_file.offsets)
            merged = ValueColumn.concat(open_file.columns)
            encoded = self._fmt.encode(merged, context)
            key = self._naming.key(self.topic, open_file.encoded_partition, self.partition,
                                   open_file.start_offset, self._fmt.extension)
            self._uploader.submit(key, encoded.body,
                                  file_tags(open_file.start_offset, open_file.last_offset, open_file.record_count))
            for suffix, companion in encoded.companions.items():
                self._uploader.submit(key[:-len(self._fmt.extension)] + suffix, companion)
            for name, suffix, fmt in self._sidecars.suffixed_formats():  # store.kafka.keys / .headers
                self._uploader.submit(key[:-len(self._fmt.extension)] + suffix, fmt.encode(merged.sidecars[name], context).body)
            closed = ClosedFile(key, open_file.encoded_partition, open_file.start_offset, open_file.last_offset,
                                open_file.record_count, len(encoded.body))
            self.closed.append(closed)
            events.emit(events.FILE_CLOSED, key=key, records=closed.record_count, bytes=closed.size_bytes)
        self._open.clear()
        self._open_records = 0
        self._state.reset()
        self._gate.reset()
        self.next_offset = next_offset

    def _add(self, offsets: list, values: ValueColumn, partitions, start: int, stop: int) -> None:
        if isinstance(partitions, str):
            self._file_for(partitions, offsets[0]).add(offsets, values)
            return
        groups: dict[str, list[int]] = {}
        for i in range(start, stop):
            groups.setdefault(partitions[i], []).append(i - start)
        for encoded, positions in groups.items():
            self._file_for(encoded, offsets[positions[0]]).add([offsets[i] for i in positions],
                                                               values.select(positions))

    def _file_for(self, encoded_partition: str, first_offset: int) -> OpenFile:
        open_file = self._open.get(encoded_partition)
        if open_file is None:
            open_file = self._open[encoded_partition] = OpenFile(encoded_partition, first_offset)
        return open_file
