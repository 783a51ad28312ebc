"""TopicPartitionWriter: routes converted records of one topic-partition into open files and closes
them on rotation. Closed files are uploaded under deterministic keys; the tail stays unwritten. A record a file
refuses goes to the dead-letter router (`RecordWriter.put`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sink_engine import events
from sink_engine.format.base import FileContext, FileEncoder, Format
from sink_engine.model import ClosedFile
from sink_engine.records import Partitions, RecordChunk, ValueColumn
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import file_tags
from sink_engine.storage.object_stream import ObjectStream
from sink_engine.storage.uploader import Uploader
from sink_engine.task.record_writer import RecordWriter
from sink_engine.task.rotation import OpenState, RotationPolicy
from sink_engine.task.schema_gate import SchemaGate
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
    `next_offset` is the first offset not in any of them (records from there on are not written)."""

    def __init__(self, topic: str, partition: int, start_offset: int, fmt: Format, naming: ObjectNaming,
                 rotation: RotationPolicy, uploader: Uploader, schema_gate: SchemaGate | None = None,
                 tombstone_partition: str = "tombstone", sidecars: Sidecars | None = None):
        self.topic, self.partition = topic, partition
        self._sidecars = sidecars or Sidecars()
        self._tombstones = Partitions.one(tombstone_partition)
        self._gate = schema_gate or SchemaGate("none", topic, partition)
        self.next_offset = start_offset
        self.closed: list[ClosedFile] = []
        self._fmt, self._naming, self._rotation, self._uploader = fmt, naming, rotation, uploader
        self._open: dict[str, OpenFile] = {}
        self._open_records = 0
        self._state = OpenState(self._open)

    def write(self, chunk: RecordChunk, values: ValueColumn, partitions: Partitions, timestamps: list | None = None,
              sizes: list | None = None) -> None:
        """Add converted records (RecordWriter.write); `timestamps` (record times for rotate.interval.ms) default
        to the rotation policy's extractor, `sizes` (for row-group cuts) to the records' Kafka value sizes."""
        position = 0
        timestamps = timestamps if timestamps is not None else self._rotation.timestamps(chunk, values)
        sizes = sizes if sizes is not None else list(map(len, chunk.values))
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
            self._add(chunk.offsets[position:stop], admitted, partitions, sizes[position:stop], position, stop)
            self._state.added(partitions, timestamps, position, stop)
            self._open_records += stop - position
            position = stop
            if self._rotation.room(self._open_records) == 0:
                self.close_all(next_offset=chunk.offsets[stop - 1] + 1)

    def write_tombstones(self, chunk: RecordChunk, routed: list | None = None) -> None:
        """Tombstones (behavior.on.null.values=write): files under the tombstone partition (of each record's
        `routed` topic when a router made them), one JSON null per record; their time for rotate.interval.ms is the
        Kafka record time."""
        stamps = chunk.timestamps if self._rotation.interval_ms > 0 else None
        partitions = self._tombstones if routed is None else \
            Partitions.per_record([(topic, self._tombstones.shared) for topic in routed])
        self.write(chunk, ValueColumn("json", [b"null"] * len(chunk)), partitions, stamps, [0] * len(chunk))

    @property
    def first_open_offset(self) -> int | None:
        """Offset of the first record in an open (unwritten) file; None when no file is open."""
        return min((f.start_offset for f in self._open.values()), default=None)

    @property
    def last_added_offset(self) -> int:
        """Offset of the last record added (open or closed files); below it every record written was added."""
        return max((f.last_offset for f in self._open.values()), default=self.next_offset - 1)

    def close_all(self, next_offset: int) -> None:
        """End every open file and queue the rest of its upload; records before `next_offset` are then all in
        closed files (in S3 once the uploader has drained)."""
        for open_file in self._open.values():
            size = open_file.finish(self._uploader)
            closed = ClosedFile(open_file.key, open_file.encoded_partition, open_file.start_offset,
                                open_file.last_offset, open_file.record_count, size)
            self.closed.append(closed)
            events.emit(events.FILE_CLOSED, key=closed.key, records=closed.record_count, bytes=closed.size_bytes)
        self._forget_open(next_offset)

    def abandon_open(self) -> None:
        """Drop the open files (the unwritten tail, read again by the next run): none of their objects appears,
        and their started multipart uploads are aborted. `first_open_offset` is None afterwards."""
        for open_file in self._open.values():
            open_file.abandon()
        self._forget_open(self.next_offset)

    def _forget_open(self, next_offset: int) -> None:
        self._open.clear()
        self._open_records = 0
        self._state.reset()
        self._gate.reset()
        self.next_offset = next_offset

    def _add(self, offsets: list, values: ValueColumn, partitions: Partitions, sizes: list, start: int,
             stop: int) -> None:
        """All or nothing: every file checks its records before any is written, and a file is opened only
        with its first record (so that its key names that record's offset)."""
        each = partitions.each
        if each is None:
            batches = [(partitions.shared, offsets, values, sizes)]
        else:
            groups: dict[str, list[int]] = {}
            for i in range(start, stop):
                groups.setdefault(each[i], []).append(i - start)
            batches = [(encoded, [offsets[i] for i in positions], values.select(positions),
                        [sizes[i] for i in positions]) for encoded, positions in groups.items()]
        staged = []
        for encoded, batch_offsets, batch_values, batch_sizes in batches:
            open_file = self._open.get(encoded) or self._new_file(encoded, batch_offsets[0])
            staged.append((encoded, open_file, open_file.prepare(batch_offsets, batch_values), batch_offsets,
                           batch_sizes))
        for encoded, open_file, prepared, batch_offsets, batch_sizes in staged:
            open_file.write(prepared, batch_offsets, batch_sizes)
            self._open[encoded] = open_file

    def _new_file(self, encoded: str | tuple[str, str], first_offset: int) -> OpenFile:
        """`encoded` the encoded partition, or (routed topic, encoded partition) when the transforms have routers
        (storage/naming.py names the file for both topics)."""
        topic, encoded_partition = encoded if isinstance(encoded, tuple) else (self.topic, encoded)
        key = self._naming.key(topic, encoded_partition, self.partition, first_offset, self._fmt.extension,
                               self.topic)
        stem, context = key[:-len(self._fmt.extension)], FileContext(self.topic, self.partition, first_offset)
        objects = [(stem, self._fmt, _whole)] + [  # store.kafka.keys / .headers: <stem>.keys<ext>, ...
            (f"{stem}.{name}", fmt, _sidecar(name)) for name, fmt in self._sidecars.formats.items()]
        outputs = []
        for object_stem, fmt, column in objects:
            stream = ObjectStream(self._uploader, object_stem + fmt.extension)
            outputs.append(_Output(object_stem, stream, fmt.open(context, stream), column))
        return OpenFile(key, encoded_partition, first_offset, outputs)


def _whole(values: ValueColumn) -> ValueColumn:
    return values


def _sidecar(name: str) -> Callable[[ValueColumn], ValueColumn]:
    return lambda values: values.sidecars[name]
