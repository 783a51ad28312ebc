"""Which records of the backup a restore produces, per source partition in offset order.

The objects of `<topics.dir>/<topic>/` are listed once (target/s3_objects/verify/listing.py; sidecars and other files
are not data
objects). Only committed records are restored: a record at or past the partition's committed offset (the
connector's `OFFSET#` item) may belong to an upload a crashed run left behind, and a partition without a commit
has nothing complete. Objects that start past `--to-offset` are not read; with one file stream per partition
an object is not read either when the next one starts at or before `--from-offset`.

Within a partition, objects can overlap in offsets (several files open at once: field and time partitioners);
records are merged by offset, an object opened only once the records before its first offset are out, so only
overlapping objects are held at once. An offset seen twice is produced once. With one file stream per partition,
an object whose selected offsets are all present in the target already is not read (`without_present`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, replace

from sink_engine.restore.objects import ObjectReader
from sink_engine.restore.present import Present
from sink_engine.restore.request import RestoreRequest
from sink_engine.restore.stored import StoredRecord
from sink_engine.target.s3_objects.verify.listing import StoredObject


@dataclass(frozen=True)
class PartitionPlan:
    partition: int
    objects: tuple[StoredObject, ...]  # to read, by start offset
    committed: int  # the committed next offset: records before it are complete


def plan(
    request: RestoreRequest, objects: list[StoredObject], committed: dict[int, int], one_stream: bool
) -> list[PartitionPlan]:
    """The partitions to restore (those asked for, or every partition with objects or a commit) with the objects
    to read. `committed`: next offset per partition."""
    by_partition: dict[int, list[StoredObject]] = {}
    for obj in objects:
        if obj.topic == request.topic:
            by_partition.setdefault(obj.partition, []).append(obj)
    partitions = request.partitions if request.partitions is not None else sorted(set(by_partition) | set(committed))
    plans = []
    for partition in partitions:
        found = sorted(by_partition.get(partition, []), key=lambda o: o.start_offset)
        end = committed.get(partition, 0)
        if request.to_offset is not None:
            end = min(end, request.to_offset + 1)
        wanted = [o for o in found if o.start_offset < end]
        if one_stream and request.from_offset is not None:
            wanted = [
                o
                for i, o in enumerate(wanted)
                if i + 1 == len(wanted) or wanted[i + 1].start_offset > request.from_offset
            ]
        plans.append(PartitionPlan(partition, tuple(wanted), committed.get(partition, 0)))
    return plans


def without_present(
    request: RestoreRequest, partition_plan: PartitionPlan, have: Present, one_stream: bool
) -> tuple[PartitionPlan, int]:
    """The plan without the objects whose selected offsets are all in `have`, and how many offsets those span.
    With one file stream per partition an object's records lie below the next object's start (as `plan` assumes
    too), so its span is known without reading it; an offset of the span that the backup lacks is in `have` only
    when another backup of the topic restored it (then the count is one too many). Otherwise (objects that
    overlap, a time range: which records it selects is in the objects) every object is read."""
    if not one_stream or request.selects_time:
        return partition_plan, 0
    end = (
        partition_plan.committed if request.to_offset is None else min(partition_plan.committed, request.to_offset + 1)
    )
    objects = partition_plan.objects
    kept, known = [], 0
    for i, obj in enumerate(objects):
        start = max(obj.start_offset, request.from_offset or 0)
        stop = min(objects[i + 1].start_offset, end) if i + 1 < len(objects) else end
        if start < stop and have.covers(start, stop - 1):
            known += stop - start
        else:
            kept.append(obj)
    return replace(partition_plan, objects=tuple(kept)), known


def selected(request: RestoreRequest, partition_plan: PartitionPlan, reader: ObjectReader) -> Iterator[StoredRecord]:
    """The partition's selected records in offset order, each offset once."""
    last = -1
    for record in _merged(partition_plan.objects, reader):
        if record.offset <= last or record.offset >= partition_plan.committed:
            continue
        last = record.offset
        if request.wants_offset(record.offset) and request.wants_time(record.timestamp):
            yield record


def _merged(objects: tuple[StoredObject, ...], reader: ObjectReader) -> Iterator[StoredRecord]:
    """The objects' records by offset; an object that overlaps nothing held or pending is passed through whole."""
    heap: list = []
    pending = list(objects)
    while heap or pending:
        while pending and (not heap or pending[0].start_offset <= heap[0][0]):
            obj = pending.pop(0)
            records = reader.records(obj)
            if not heap and records and (not pending or pending[0].start_offset > records[-1].offset):
                yield from records
                continue
            _push(heap, iter(records))
        if heap:
            _, _, record, records = heapq.heappop(heap)
            yield record
            _push(heap, records)


def _push(heap: list, records: Iterator[StoredRecord]) -> None:
    record = next(records, None)
    if record is not None:
        heapq.heappush(heap, (record.offset, id(records), record, records))
