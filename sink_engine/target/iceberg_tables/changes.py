"""A range's changes to an upsert table (a Spark task's side of upsert mode), held until the range ends.

Each record is a change of the row its id columns name: an upsert (its row), or a delete: a value whose
`iceberg.tables.cdc-field` holds `D`/`d`, or a tombstone, whose key (after `key.converter`) names the row: a
primitive key the single id column, a struct or JSON object key the id columns by name. At the end the last change
of each key wins (Kafka order, `upsert.last_changes`): its rows are written as data files, and the keys of every
change go to the driver, whose commit removes their old rows (docs/iceberg.md, "Upsert tables").
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from sink_engine.convert.base import Converter
from sink_engine.records import RecordChunk
from sink_engine.target.iceberg_tables.errors import TableSchemaError
from sink_engine.target.iceberg_tables.schema_fit import FitError, fit
from sink_engine.target.iceberg_tables.settings import UpsertSettings
from sink_engine.target.iceberg_tables.upsert import last_changes

UPSERTS, DELETES = ("I", "U", "c", "r", "u"), ("D", "d")


def check_changes(records: pa.Table, fitted: pa.Table, id_columns: tuple[str, ...], cdc_field: str | None) -> None:
    """FitError naming the column when a record's id column is null or its operation is not one of UPSERTS and
    DELETES."""
    for name in id_columns:
        if fitted[name].null_count:
            raise FitError(name, "an upsert table's id column needs a value")
    if cdc_field is None:
        return
    if cdc_field not in records.column_names:
        raise FitError(cdc_field, "the record has no iceberg.tables.cdc-field")
    ops = records[cdc_field].cast(pa.string())
    if ops.null_count or not pc.all(pc.is_in(ops, pa.array(UPSERTS + DELETES))).as_py():
        raise FitError(cdc_field, f"an operation is one of {', '.join(UPSERTS + DELETES)}")


def deletes_of(records: pa.Table, cdc_field: str | None) -> pa.Array:
    """Whether each record (checked by `check_changes`) deletes its key."""
    if cdc_field is None:
        return pa.array([False] * records.num_rows)
    return pc.is_in(records[cdc_field].cast(pa.string()), pa.array(DELETES)).combine_chunks()


class RangeChanges:
    """The changes of one range in Kafka order, each held fitted to the table's schema of its time."""

    def __init__(self, upsert: UpsertSettings, identifier: str, topic: str):
        self.id_columns, self.cdc_field = upsert.id_columns(identifier), upsert.cdc_field
        self.id_key = upsert.id_columns_key(identifier)  # the key that names the id columns, for errors
        self._key_settings, self._topic = upsert.key_converter, topic
        self._key_converter: Converter | None = None  # built with the first tombstones
        self._held: list[tuple[pa.Table, pa.Array]] = []

    def add(self, fitted: pa.Table, deletes: pa.Array) -> None:
        self._held.append((fitted, deletes))

    def add_tombstones(self, chunk: RecordChunk, schema: pa.Schema) -> None:
        """Deletes of the rows the keys of the tombstones of `chunk` name; TableSchemaError naming the first
        tombstone whose key names no row of the table (no key, a field missing, a type that does not fit)."""
        rows = [self._row(chunk, position, key) for position, key in enumerate(self._keys(chunk))]
        id_schema = pa.schema([schema.field(name) for name in self.id_columns])
        for position, row in enumerate(rows):
            try:
                pa.Table.from_pylist([row], schema=id_schema)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
                raise self._bad(chunk, position, f"its key does not fit the id columns: {e}") from e
        self.add(fit(schema, pa.Table.from_pylist(rows, schema=id_schema)), pa.array([True] * len(rows)))

    def _keys(self, chunk: RecordChunk) -> list:
        """The keys as `key.converter` reads them (dicts of struct and JSON object keys), None where none."""
        from sink_engine.convert.registry import converter_for  # imports pyarrow

        self._key_converter = self._key_converter or converter_for(self._key_settings, self._topic)
        present = [i for i, key in enumerate(chunk.keys) if key is not None]
        keys: list = [None] * len(chunk)
        if present:
            converted = self._key_converter.convert(
                RecordChunk(
                    chunk.topic,
                    chunk.partition,
                    [chunk.offsets[i] for i in present],
                    [chunk.keys[i] for i in present],
                    keys=[None] * len(present),
                    timestamps=[0] * len(present),
                )
            ).documents()
            for i, key in zip(present, converted, strict=True):
                keys[i] = key
        return keys

    def _row(self, chunk: RecordChunk, position: int, key: object) -> dict:
        if isinstance(key, dict):
            missing = [name for name in self.id_columns if key.get(name) is None]
            if missing:
                raise self._bad(chunk, position, f"its key has no value for the id column {missing[0]}")
            return {name: key[name] for name in self.id_columns}
        if key is None or len(self.id_columns) > 1:
            raise self._bad(
                chunk,
                position,
                "its key names no row: a primitive key names a table of one id column, a struct key names the id "
                f"columns ({', '.join(self.id_columns)}) by field",
            )
        return {self.id_columns[0]: key}

    @staticmethod
    def _bad(chunk: RecordChunk, position: int, reason: str) -> TableSchemaError:
        return TableSchemaError(chunk.topic, chunk.partition, chunk.offsets[position], f"a tombstone: {reason}")

    def take(self, schema: pa.Schema) -> tuple[pa.Table, pa.Table]:
        """(rows to write, keys of every change) of the changes held, which are let go: each key's last change, all
        rows in the table's `schema` (which may have evolved since a change was held)."""
        held, self._held = self._held, []
        if not held:
            empty = schema.empty_table()
            return empty, empty.select(list(self.id_columns))
        rows = pa.concat_tables([fit(schema, fitted) for fitted, _ in held])
        deletes = pa.concat_arrays([deletes for _, deletes in held])
        return last_changes(rows, deletes, self.id_columns)
