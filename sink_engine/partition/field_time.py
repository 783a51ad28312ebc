"""FieldAndTimeBasedPartitioner (this engine's own; the Confluent connector has no such layout): the field
segments of `partition.field.name`, then the time path of `path.format`, e.g.
`region=us-east/year=2024/month=01/day=15`. Field values are read and escaped as by FieldPartitioner, the
time bucket is computed as by TimeBasedPartitioner (`partition.duration.ms`, `timezone`, `locale`,
`timestamp.extractor`)."""

from __future__ import annotations

from typing import cast

from sink_engine.partition.field import FieldPartitioner
from sink_engine.partition.time_based import TimeBasedPartitioner
from sink_engine.partition.timestamps import TimestampExtractor
from sink_engine.records import Partitions, RecordChunk, ValueColumn


class FieldAndTimeBasedPartitioner:
    def __init__(self, fields: FieldPartitioner, times: TimeBasedPartitioner, directory_delim: str):
        self._fields, self._times, self._delim = fields, times, directory_delim

    @property
    def extractor(self) -> TimestampExtractor:
        return self._times.extractor

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        # both partitioners encode paths (str): no topic is routed before the transforms
        fields = cast(list[str], self._fields.encode(chunk, values).as_list(len(chunk)))
        times = cast(list[str], self._times.encode(chunk, values).as_list(len(chunk)))
        delim = self._delim
        return Partitions.per_record([field + delim + time for field, time in zip(fields, times)])
