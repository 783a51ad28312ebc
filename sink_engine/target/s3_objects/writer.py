"""TopicPartitionWriter: routes converted records of one topic-partition into open files and closes
them on rotation. Closed files are uploaded under deterministic keys; the tail stays unwritten. A record a file
refuses goes to the dead-letter router (`RecordWriter.put`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sink_engine import events
from sink_engine.format.base import FileContext, FileEncoder, Format
from sink_engine.model import ClosedFile
from sink_engine.records import EncodedPartition, Partitions, RecordChunk, ValueColumn
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import file_tags
from sink_engine.storage.object_stream import ObjectStream
from sink_engine.storage.uploader import Uploader
from sink_engine.target.s3_objects.schema_gate import SchemaGate
from sink_engine.task.record_writer import RecordWriter
from sink_engine.task.rotation import ALL, OpenState, RotationPolicy, Window
from sink_engine.task.sidecars import Sidecars


@dataclass
class _Output:
    """One object of a file (the data object or a sidecar): its key without the format's extension (companion
    objects replace the extension), its stream, its encoder, and which column of the values it takes."""

    stem: str
    stream: ObjectStream
    encoder: FileEncoder
    column: Callable[[ValueColumn], ValueColumn]


@dataclass
class OpenFile:
    """A file being written: each record goes into its data object (and sidecar objects) as it is added."""

    key: str
    encoded_partition: str
    start_offset: int
    outputs: list[_Output]
    last_offset: int = -1
    record_count: int = 0

    def prepare(self, offsets: list, values: ValueColumn) -> list:
        """Every object checks and converts its values without writing (RecordError names a bad one)."""
        return [output.encoder.prepare(output.column(values), offsets) for output in self.outputs]

    def write(self, prepared: list, offsets: list, sizes: list) -> None:
        for output, batch in zip(self.outputs, prepared):
            output.encoder.write(batch, sizes)
        self.last_offset = offsets[-1]
        self.record_count += len(offsets)

    def finish(self, uploader: Uploader) -> int:
        """End every object and queue the rest of its upload; returns the data object's size in bytes."""
        tags = file_tags(self.start_offset, self.last_offset, self.record_count)
        for output in self.outputs:
            companions = output.encoder.finish()
            output.stream.finish(tags if output is self.outputs[0] else None)
            for suffix, body in companions.items():
                uploader.submit(output.stem + suffix, body)
        return self.outputs[0].stream.size

    def abandon(self) -> None:
        for output in self.outputs:
            output.stream.abandon()


class TopicPartitionWriter(RecordWriter):
    """Contract: after `write` (or `put`) calls in offset order, `closed` lists the uploaded files and
    `first_open_offset` (else `next_offset`) is the first offset the next run must read again.

    The open files are grouped in lanes (lane key -> OpenState over the lane's files by encoded partition): one
    lane (key None) holds them all, except with files separated by schema (`SchemaGate.separates`), where each
    schema of struct values has its own lane (task/rotation.py). `next_offset` is the last offset at which no file
    was open; files closed after it (only lanes make those) are written again, with the same keys and bytes, by a
    run that starts there, since every decision of the writer depends only on the records taken since then."""

    def __init__(
        self,
        topic: str,
        partition: int,
        start_offset: int,
        fmt: Format,
        naming: ObjectNaming,
        rotation: RotationPolicy,
        uploader: Uploader,
        schema_gate: SchemaGate | None = None,
        tombstone_partition: str = "tombstone",
        sidecars: Sidecars | None = None,
    ):
        self.topic, self.partition = topic, partition
        self._sidecars = sidecars or Sidecars()
        self._tombstone_partition = tombstone_partition
        self._tombstones = Partitions.one(tombstone_partition)
        self._gate = schema_gate or SchemaGate("none", topic, partition)
        self.next_offset = start_offset
        self.closed: list[ClosedFile] = []
        self._fmt, self._naming, self._rotation, self._uploader = fmt, naming, rotation, uploader
        self._lanes: dict[object, OpenState] = {}  # the lanes holding open records
        self._taken = 0  # records taken, for the span bound
        # offset of the last record added (open or closed files); below it every record written was added
        self.last_added_offset = start_offset - 1
        self._reread_from: int | None = None  # first offset of the files closed since `next_offset`
        self._window = Window()  # the records taken since no file was open

    def write(
        self,
        chunk: RecordChunk,
        values: ValueColumn,
        partitions: Partitions,
        timestamps: list | None = None,
        sizes: list | None = None,
        gated: bool = True,
    ) -> None:
        """Add converted records (RecordWriter.write); `timestamps` (record times for rotate.interval.ms) default
        to the rotation policy's extractor, `sizes` (for row-group cuts) to the records' Kafka value sizes. Not
        `gated`: the schema gate does not see them (tombstones, in an encoded partition of their own, change no
        schema there, as the connector's currentSchemas per encoded partition)."""
        timestamps = timestamps if timestamps is not None else self._rotation.timestamps(chunk, values)
        sizes = sizes if sizes is not None else _value_sizes(chunk.values)
        keys = self._gate.lanes(chunk.offsets[0], values, bool(self._lanes)) if len(chunk) and gated else None
        if keys is None:
            self._write_lane(None, chunk, values, partitions, timestamps, sizes, gated=gated)
        elif keys.count(keys[0]) == len(keys) and self._alone(keys[0]):
            self._write_lane(keys[0], chunk, values, partitions, timestamps, sizes, gated=False)
        else:
            self._write_lanes(keys, chunk, values, partitions, timestamps, sizes)

    def _alone(self, key: object) -> bool:
        """Whether every record taken since no file was open went to lane `key` (rotating it alone is then
        rotating it with the other lanes)."""
        return not self._lanes or self._window.lanes == {key}

    def _write_lane(
        self,
        key: object,
        chunk: RecordChunk,
        values: ValueColumn,
        partitions: Partitions,
        timestamps: list | None,
        sizes: list,
        gated: bool,
    ) -> None:
        """Records that all go to lane `key`, no other lane holding open records: as the connector rotates them."""
        position = 0
        while position < len(chunk):
            lane = self._lanes.get(key) or OpenState({})
            stop = min(len(chunk), position + self._rotation.room(lane.records))
            stop = self._rotation.first_cut(lane, partitions, timestamps, position, stop)
            if stop == position:  # record time, partition change or the open-file cap closes the open files
                self.close_all(next_offset=chunk.offsets[position])
                continue
            admitted = values.slice(position, stop)
            if gated:
                stop, admitted = self._gate.admit(chunk.offsets, values, partitions, position, stop, lane.records > 0)
                if stop == position:  # a schema change closes the open files (schema.compatibility)
                    self.close_all(next_offset=chunk.offsets[position])
                    continue
            self._add({key: range(position, stop)}, chunk.offsets, admitted, partitions, timestamps, sizes, position)
            position = stop
            if self._rotation.room(self._lanes[key].records) == 0:
                self.close_all(next_offset=chunk.offsets[stop - 1] + 1)

    def _write_lanes(
        self,
        keys: list,
        chunk: RecordChunk,
        values: ValueColumn,
        partitions: Partitions,
        timestamps: list | None,
        sizes: list,
    ) -> None:
        """Records of several lanes: each lane's records between two triggers are added at once."""
        position = 0
        while position < len(chunk):
            stop, close, after = self._rotation.lane_cut(
                self._lanes, self._window, keys, partitions, timestamps, self._taken, position, len(chunk)
            )
            if stop > position:
                lanes: dict[object, list[int]] = {}
                for i in range(position, stop):
                    lanes.setdefault(keys[i], []).append(i)
                self._add(lanes, chunk.offsets, values.slice(position, stop), partitions, timestamps, sizes, position)
            if close is not None:
                next_offset = chunk.offsets[stop - 1] + 1 if after else chunk.offsets[stop]
                if close == ALL:
                    self.close_all(next_offset)
                else:
                    self._close_lane(close, next_offset)
            position = stop

    def write_tombstones(self, chunk: RecordChunk, routed: list | None = None, sidecars: dict | None = None) -> None:
        """Tombstones (behavior.on.null.values=write): files under the tombstone partition (of each record's
        `routed` topic when a router made them), one JSON null per record, their keys and headers in the sidecars
        (the connector requires the keys with tombstones); their time for rotate.interval.ms is the Kafka record
        time."""
        stamps = chunk.timestamps if self._rotation.interval_ms > 0 else None
        partitions = (
            self._tombstones
            if routed is None
            else Partitions.per_record([(topic, self._tombstone_partition) for topic in routed])
        )
        column = ValueColumn("json", [b"null"] * len(chunk), sidecars=sidecars)
        self.write(chunk, column, partitions, stamps, [0] * len(chunk), gated=False)

    @property
    def first_open_offset(self) -> int | None:
        """The first offset the next run must read again while a file is open: the first record of an open file,
        or of a file closed since `next_offset` (then written again by that run); None when no file is open."""
        starts = [f.start_offset for lane in self._lanes.values() for f in lane.open_partitions.values()]
        if not starts:
            return None
        return min(starts) if self._reread_from is None else min(min(starts), self._reread_from)

    def close_all(self, next_offset: int) -> None:
        """End every open file and queue the rest of its upload; records before `next_offset` are then all in
        closed files (in S3 once the uploader has drained)."""
        for key in list(self._lanes):
            self._close_lane(key, next_offset)
        self._settle(next_offset)

    def _close_lane(self, key: object, next_offset: int) -> None:
        """End the files of lane `key` (before record `next_offset`)."""
        for open_file in self._lanes.pop(key).open_partitions.values():
            size = open_file.finish(self._uploader)
            closed = ClosedFile(
                open_file.key,
                open_file.encoded_partition,
                open_file.start_offset,
                open_file.last_offset,
                open_file.record_count,
                size,
            )
            self.closed.append(closed)
            events.emit(events.FILE_CLOSED, key=closed.key, records=closed.record_count, bytes=closed.size_bytes)
            self._reread_from = min(
                closed.start_offset, self._reread_from if self._reread_from is not None else closed.start_offset
            )
        if not self._lanes:
            self._settle(next_offset)

    def abandon_open(self) -> None:
        """Drop the open files (the unwritten tail, read again by the next run): none of their objects appears,
        and their started multipart uploads are aborted. `first_open_offset` is None afterwards."""
        for lane in self._lanes.values():
            for open_file in lane.open_partitions.values():
                open_file.abandon()
        self._lanes.clear()
        self._settle(self.next_offset)

    def _settle(self, next_offset: int) -> None:
        """No file is open: a run may start at `next_offset`."""
        self._gate.reset()
        self._reread_from, self._window = None, Window()
        self.next_offset = next_offset

    def _add(
        self,
        lanes: dict,
        offsets: list,
        values: ValueColumn,
        partitions: Partitions,
        timestamps: list | None,
        sizes: list,
        start: int,
    ) -> None:
        """Add records (the chunk's positions by lane, in order; `values` from position `start` on). All or
        nothing: every file checks its records before any is written, and a file is opened only with its first
        record (so that its key names that record's offset)."""
        each, staged, lanes_taken = partitions.each, [], []
        for key, positions in lanes.items():
            lane = self._lanes.get(key) or OpenState({})
            groups: Mapping[EncodedPartition, Sequence[int]] = {partitions.shared: positions}
            if each is not None:
                grouped: dict[EncodedPartition, list[int]] = {}
                for i in positions:
                    grouped.setdefault(each[i], []).append(i)
                groups = grouped
            for encoded, group in groups.items():
                first, stop = group[0], group[-1] + 1
                if stop - first == len(group):  # consecutive records
                    batch_offsets, batch_sizes = offsets[first:stop], sizes[first:stop]
                    batch_values = values if len(group) == len(values) else values.slice(first - start, stop - start)
                else:
                    batch_offsets, batch_sizes = [offsets[i] for i in group], [sizes[i] for i in group]
                    batch_values = values.select([i - start for i in group])
                open_file = lane.open_partitions.get(encoded) or self._new_file(encoded, batch_offsets[0])
                staged.append(
                    (
                        lane,
                        encoded,
                        open_file,
                        open_file.prepare(batch_offsets, batch_values),
                        batch_offsets,
                        batch_sizes,
                    )
                )
            lanes_taken.append((key, lane, positions))
        for lane, encoded, open_file, prepared, batch_offsets, batch_sizes in staged:
            open_file.write(prepared, batch_offsets, batch_sizes)
            lane.open_partitions[encoded] = open_file
        for key, lane, positions in lanes_taken:
            lane.added(partitions, timestamps, positions[0], positions[-1], len(positions))
            self._lanes[key] = lane
        first, last = min(p[0] for p in lanes.values()), max(p[-1] for p in lanes.values())
        self._window.took(self._taken, None if timestamps is None else timestamps[first], partitions.at(last), lanes)
        self._taken += sum(map(len, lanes.values()))
        self.last_added_offset = max(self.last_added_offset, offsets[last])

    def _new_file(self, encoded: EncodedPartition, first_offset: int) -> OpenFile:
        """`encoded` the encoded partition, or (routed topic, encoded partition) when the transforms have routers
        (storage/naming.py names the file for both topics)."""
        topic, encoded_partition = encoded if isinstance(encoded, tuple) else (self.topic, encoded)
        key = self._naming.key(topic, encoded_partition, self.partition, first_offset, self._fmt.extension, self.topic)
        stem, context = key[: -len(self._fmt.extension)], FileContext(self.topic, self.partition, first_offset)
        objects = [(stem, self._fmt, _whole)] + [  # store.kafka.keys / .headers: <stem>.keys<ext>, ...
            (f"{stem}.{name}", fmt, _sidecar(name)) for name, fmt in self._sidecars.formats.items()
        ]
        outputs = []
        for object_stem, fmt, column in objects:
            stream = ObjectStream(self._uploader, object_stem + fmt.extension)
            outputs.append(_Output(object_stem, stream, fmt.open(context, stream), column))
        return OpenFile(key, encoded_partition, first_offset, outputs)


def _value_sizes(values: list) -> list:
    """Kafka value sizes in bytes; a null value (EnvelopeFormat keeps tombstones) counts 0."""
    try:
        return list(map(len, values))
    except TypeError:
        return [0 if value is None else len(value) for value in values]


def _whole(values: ValueColumn) -> ValueColumn:
    return values


def _sidecar(name: str) -> Callable[[ValueColumn], ValueColumn]:
    return lambda values: values.sidecars[name]
