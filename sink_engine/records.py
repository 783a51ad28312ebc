"""The shapes records take on their way through a task.

`RecordChunk`: consecutive records of one topic-partition, in offset order, as read. Offsets and values are
lists; keys and timestamps are read from the Kafka messages only when a step asks for them (most layouts never
do, and touching them costs a per-record call each). `ValueColumn`: their values once converted. `Partitions`:
the encoded partition of each. `PreparedRecords`: the three together, what a writer takes. `Transformed`: a
chunk after single message transforms (task/transforms.py), as parts to write in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from sink_engine.convert.schema import Schema


class RecordChunk:
    def __init__(
        self,
        topic: str,
        partition: int,
        offsets: list,
        values: list,
        messages: list | None = None,
        keys: list | None = None,
        timestamps: list | None = None,
    ):
        """Either `messages` (confluent_kafka Messages, parallel to offsets) or `keys` and `timestamps`."""
        self.topic, self.partition, self.offsets, self.values = topic, partition, offsets, values
        self._messages = messages
        if keys is not None:
            self.keys = keys
        if timestamps is not None:
            self.timestamps = timestamps

    def __len__(self) -> int:
        return len(self.offsets)

    @cached_property
    def keys(self) -> list:
        assert self._messages is not None  # else given to __init__, which shadows this property
        return [m.key() for m in self._messages]

    @cached_property
    def headers(self) -> list:
        """Each record's headers as a list of (name, bytes or None); empty without Kafka messages."""
        if self._messages is None:
            return [[] for _ in self.offsets]
        return [m.headers() or [] for m in self._messages]

    @cached_property
    def timestamps(self) -> list:
        """Record timestamps in epoch milliseconds."""
        assert self._messages is not None  # else given to __init__, which shadows this property
        return [m.timestamp()[1] for m in self._messages]

    @cached_property
    def timestamp_types(self) -> list:
        """Each record's timestamp type, Kafka's TimestampType code: 0 none, 1 CreateTime, 2 LogAppendTime (1
        without Kafka messages)."""
        if self._messages is None:
            return [1] * len(self.offsets)
        return [m.timestamp()[0] for m in self._messages]

    def slice(self, start: int, stop: int) -> RecordChunk:
        return self._derive(lambda items: items[start:stop])

    def select(self, positions: list[int]) -> RecordChunk:
        """The records at these positions, in the given order."""
        return self._derive(lambda items: [items[i] for i in positions])

    def _derive(self, pick: Callable[[Sequence[Any]], Any]) -> RecordChunk:
        if self._messages is not None:
            return RecordChunk(
                self.topic, self.partition, pick(self.offsets), pick(self.values), messages=pick(self._messages)
            )
        return RecordChunk(
            self.topic,
            self.partition,
            pick(self.offsets),
            pick(self.values),
            keys=pick(self.keys),
            timestamps=pick(self.timestamps),
        )


# Kinds of converted values (`ValueColumn.items`):
#   "json":   JSON text of each value as bytes (validated, on one line)
#   "string": str
#   "bytes":  bytes
#   "struct": dicts of a Connect schema (convert/schema.py); `schemas` holds each record's Schema
KINDS = ("json", "string", "bytes", "struct")

# A record's encoded partition: the partitioner's path, or (routed topic, path) once the transforms' routers gave
# records their topics (task/transforms.py); writers group a chunk's records into files by it.
EncodedPartition = str | tuple[str, str]


class ValueColumn:
    """Converted values of consecutive records. `items` are what formats encode; `documents()` gives
    the values as Python objects (dicts for JSON objects and structs) for steps that read fields, parsed once.

    `schemas` is parallel to `items`: for a struct column the schema each value was written with, or after
    projection the schema of the file; for a "json" column of values with a schema that are not structs (an int32,
    an array: JsonConverter's envelope, Avro), each value's schema (None for schemaless JSON). A None item is a null
    value a converter read from a non-null Kafka value (`null_positions`). `sidecars` maps a sidecar name ("keys",
    "headers") to a column parallel to this one, so that the sidecar records follow the values into the same files.
    """

    def __init__(
        self,
        kind: str,
        items: list,
        documents: list | None = None,
        schemas: list | None = None,
        sidecars: dict | None = None,
    ):
        self.kind, self.items, self._documents = kind, items, documents
        self.schemas, self.sidecars = schemas, sidecars or {}

    def __len__(self) -> int:
        return len(self.items)

    @property
    def schema(self) -> Schema | None:
        """The schema of a struct column whose values share one (a file's column), else None."""
        return self.schemas[0] if self.schemas else None

    def null_positions(self) -> list[int]:
        """The positions of null values (a JsonConverter envelope's null payload under an optional schema, an Avro
        null under a nullable schema): Connect reads them as null values, for `behavior.on.null.values`."""
        items = self.items
        return [i for i, item in enumerate(items) if item is None] if None in items else []

    def documents(self) -> list:
        if self._documents is None:
            loads = orjson.loads
            self._documents = (
                [None if i is None else loads(i) for i in self.items] if self.kind == "json" else self.items
            )
        return self._documents

    def slice(self, start: int, stop: int) -> ValueColumn:
        return self._derive(lambda items: items[start:stop])

    def select(self, positions: list[int]) -> ValueColumn:
        return self._derive(lambda items: [items[i] for i in positions])

    def with_sidecars(self, sidecars: dict) -> ValueColumn:
        """The same column with these sidecar columns (parallel to it) attached."""
        return ValueColumn(self.kind, self.items, self._documents, self.schemas, sidecars)

    def _derive(self, pick: Callable[[Sequence[Any]], Any]) -> ValueColumn:
        return ValueColumn(
            self.kind,
            pick(self.items),
            None if self._documents is None else pick(self._documents),
            None if self.schemas is None else pick(self.schemas),
            {name: column._derive(pick) for name, column in self.sidecars.items()},
        )

    @classmethod
    def concat(cls, columns: list[ValueColumn]) -> ValueColumn:
        """One column of all items, in order (documents are not carried: files keep only items)."""
        items: list = []
        schemas: list | None = None if columns[0].schemas is None else []
        for column in columns:
            items.extend(column.items)
            if schemas is not None:
                assert column.schemas is not None  # the columns of one file are of one kind
                schemas.extend(column.schemas)
        sidecars = {name: cls.concat([c.sidecars[name] for c in columns]) for name in columns[0].sidecars}
        return cls(columns[0].kind, items, None, schemas, sidecars)


@dataclass(frozen=True, slots=True)
class Partitions:
    """The encoded partition of each record of a chunk: `shared` when every record has the same one (the fast
    path: nothing held or looked up per record), else `each`, one per record (and `shared` unused). Hot loops read
    the two fields once and test `each is None` rather than calling `at`."""

    shared: EncodedPartition = ""
    each: Sequence[EncodedPartition] | None = None

    @classmethod
    def one(cls, encoded: EncodedPartition) -> Partitions:
        return cls(shared=encoded)

    @classmethod
    def per_record(cls, encoded: Sequence[EncodedPartition]) -> Partitions:
        return cls(each=encoded)

    def at(self, position: int) -> EncodedPartition:
        return self.shared if self.each is None else self.each[position]

    def as_list(self, count: int) -> Sequence[EncodedPartition]:
        """One encoded partition per record, for `count` records."""
        return [self.shared] * count if self.each is None else self.each

    def slice(self, start: int, stop: int) -> Partitions:
        return self if self.each is None else Partitions(each=self.each[start:stop])


@dataclass(frozen=True, slots=True)
class PreparedRecords:
    """Records a writer takes: `values` converted and `partitions` encoded, parallel to `records`."""

    records: RecordChunk
    values: ValueColumn
    partitions: Partitions

    def __len__(self) -> int:
        return len(self.records)

    def slice(self, start: int, stop: int) -> PreparedRecords:
        return PreparedRecords(
            self.records.slice(start, stop), self.values.slice(start, stop), self.partitions.slice(start, stop)
        )


@dataclass(frozen=True, slots=True)
class Tombstones:
    """Records whose value is null (read from Kafka, or after the transforms), written as tombstones
    (behavior.on.null.values=write); `routed` each one's topic when the chain has routers, else None."""

    records: RecordChunk
    routed: list | None = None
    sidecars: dict | None = None  # with store.kafka.keys / headers: their columns (task/sidecars.py)


@dataclass(frozen=True, slots=True)
class Transformed:
    """A chunk after single message transforms: what to write, in offset order (PreparedRecords and Tombstones),
    and the offsets of the records the transforms dropped."""

    parts: list
    dropped: list
