"""`schema.compatibility`: when a schema change closes a topic-partition's open files, and projection.

As in the Confluent connector (storage-common's StorageSchemaCompatibility and the S3 sink's
TopicPartitionWriter): each encoded partition has a current schema, set by the first record that goes
to it after the open files were last closed. A record whose schema "changes the schema" closes every open
file of the topic-partition (when any record is open) and becomes the current schema; any other record is
projected to the current schema. A schema changes the schema:
  NONE:            when it differs from the current one (no projection: files hold one schema each);
  BACKWARD, FULL:  when its version is newer (older records are projected up to the current schema);
  FORWARD:         when its version is older (newer records are projected down to the current schema).
BACKWARD, FORWARD and FULL need schema versions (registry versions, or `version` in a JSON envelope).

`sink.schema.files`: under NONE, `rotate` is the connector's behaviour above; `separate` (the default) gives each
schema its own open files instead (`lanes`: the writer's lanes, task/rotation.py), so that a schema change closes
nothing.
Values without a schema ("json", "string", "bytes" columns) pass through; switching between them and
schema'd values while files are open is an error, as in the connector.
"""

from __future__ import annotations

from collections.abc import Sequence

from sink_engine.convert.projection import ProjectionError, project
from sink_engine.convert.schema import Schema
from sink_engine.errors import RecordError
from sink_engine.records import EncodedPartition, Partitions, ValueColumn

MODES = ("none", "backward", "forward", "full")
FILES = ("separate", "rotate")  # sink.schema.files


def changes_schema(mode: str, schema: Schema, current: Schema) -> bool:
    """Whether a record of `schema` must start new files when the current schema is `current`."""
    if schema is current or schema == current:
        return False
    if mode == "none":
        return True
    if schema.version is None or current.version is None:
        raise ProjectionError(
            f"a schema version is required for {mode.upper()} compatibility "
            f"({schema.describe()} after {current.describe()})"
        )
    return schema.version < current.version if mode == "forward" else schema.version > current.version


class SchemaGate:
    """Per topic-partition state of the current schemas. `admit` is called before records are appended;
    `reset` when the writer has closed every open file."""

    def __init__(self, mode: str, topic: str, partition: int, files: str = "separate"):
        self.mode, self.topic, self.partition = mode, topic, partition
        self.separates = mode == "none" and files == "separate"
        self._current: dict[EncodedPartition, Schema] = {}
        self._kind: bool | None = None
        self._lane_keys: dict = {}  # schema -> its lane's number

    def lanes(self, offset: int, values: ValueColumn, has_open: bool) -> list | None:
        """With files separated by schema and struct values, the lane of each value: a number per schema (equal
        schemas share one); else None (one lane, `admit` decides). `offset` is the first value's record."""
        if not self.separates or values.kind != "struct":
            return None
        self._check_kind(offset, values.kind, has_open)
        assert values.schemas is not None  # a struct column's
        by_id: dict[int, object] = {}
        keys = []
        for schema in values.schemas:
            key = by_id.get(id(schema))
            if key is None:
                key = by_id[id(schema)] = self._lane_keys.setdefault(schema, len(self._lane_keys))
            keys.append(key)
        return keys

    def reset(self) -> None:
        self._current.clear()
        self._kind = None

    def admit(
        self, offsets: list, values: ValueColumn, partitions: Partitions, start: int, stop: int, has_open: bool
    ) -> tuple[int, ValueColumn]:
        """Records [start, end) that can be appended now, projected to the current schemas. `end == start`
        means the open files must be closed first (a schema change); then call again."""
        self._check_kind(offsets[start], values.kind, has_open)
        if values.kind != "struct":
            return stop, values.slice(start, stop)
        schemas, shared, each = values.schemas, partitions.shared, partitions.each
        assert schemas is not None  # a struct column's
        for i in range(start, stop):
            encoded = shared if each is None else each[i]
            current = self._current.setdefault(encoded, schemas[i])
            if current is not schemas[i] and self._changes(offsets[i], schemas[i], current):
                if has_open or i > start:
                    return i, values.slice(start, i)
                self._current[encoded] = schemas[i]
        return stop, self._project(offsets, values, partitions, start, stop)

    def _changes(self, offset: int, schema: Schema, current: Schema) -> bool:
        try:
            return changes_schema(self.mode, schema, current)
        except ProjectionError as e:
            raise RecordError(self.topic, self.partition, offset, str(e)) from None

    def _project(
        self, offsets: Sequence[int], values: ValueColumn, partitions: Partitions, start: int, stop: int
    ) -> ValueColumn:
        shared, each, column_schemas = partitions.shared, partitions.each, values.schemas
        assert column_schemas is not None  # a struct column's
        if all(column_schemas[i] is self._current[shared if each is None else each[i]] for i in range(start, stop)):
            return values.slice(start, stop)  # nothing to project: the column as it is (a columnar one stays so)
        items, schemas = values.items[start:stop], column_schemas[start:stop]
        for j, schema in enumerate(schemas):
            current = self._current[shared if each is None else each[start + j]]
            if schema is current:
                continue
            try:
                items[j] = project(items[j], schema, current)
            except ProjectionError as e:
                raise RecordError(
                    self.topic,
                    self.partition,
                    offsets[start + j],
                    f"cannot be projected from {schema.describe()} to {current.describe()} "
                    f"(schema.compatibility={self.mode.upper()}): {e}",
                ) from None
            schemas[j] = current
        sliced = values.slice(start, stop)
        return ValueColumn("struct", items, items, schemas, sliced.sidecars)

    def _check_kind(self, offset: int, kind: str, has_open: bool) -> None:
        schemaful = kind == "struct"
        if has_open and self._kind is not None and self._kind != schemaful:
            raise RecordError(
                self.topic,
                self.partition,
                offset,
                "switch between schema-based and schema-less values is not supported",
            )
        self._kind = schemaful
