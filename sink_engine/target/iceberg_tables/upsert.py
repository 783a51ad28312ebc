"""Upsert tables (iceberg.tables.upsert-mode-enabled): each key's row is that of its last change, by copy-on-write.

Pure Arrow steps and one table step, used by the tasks (`last_changes`), the driver's commit (`run_files`)
and the bench (devtools/bench_upsert.py):

- `last_changes`: of a range's changes (rows in Kafka order, each an upsert or a delete), the last of each key:
  the rows to write, and the keys whose old rows go.
- `run_files` / `rewrite_without`: the data files of a table's current snapshot that hold a row of some keys,
  and new data files holding their other rows. The commit deletes the former and adds the latter with the run's
  rows in one snapshot, so the table never holds two rows of a key nor a row of a deleted key. Delete files of
  other writers are applied when a file is read, so a rewritten file holds exactly the rows a reader saw.

Why copy-on-write and not delete files: docs/iceberg.md, "Upsert tables" (measured with `make bench-upsert`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.conversions import from_bytes
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, _dataframe_to_data_files
from pyiceberg.manifest import DataFile
from pyiceberg.table import FileScanTask, Table, TableProperties
from pyiceberg.types import IntegerType, LongType, StringType

if TYPE_CHECKING:
    from sink_engine.target.iceberg_tables.task import TableFiles

ROW = "__sink_engine_row"  # a row's position, while keys are joined


def last_changes(rows: pa.Table, deletes: pa.Array, id_columns: tuple[str, ...]) -> tuple[pa.Table, pa.Table]:
    """(rows to write, changed keys): of `rows` in Kafka order, with `deletes` True where a row's change deletes
    its key, the row of each key whose last change (by `id_columns`) is no delete, in the order of the rows; and
    the id columns of every key changed."""
    if rows.num_rows == 0:
        return rows, rows.select(list(id_columns))
    keys = rows.select(list(id_columns)).append_column(ROW, pa.array(range(rows.num_rows), pa.int64()))
    positions = keys.group_by(list(id_columns), use_threads=False).aggregate([(ROW, "max")])[f"{ROW}_max"]
    positions = positions.take(pc.sort_indices(positions))
    deleted = pc.take(deletes, positions)
    kept = rows.take(pc.filter(positions, pc.invert(deleted)))
    return kept, rows.select(list(id_columns)).take(positions)


def holds_keys(rows: pa.Table, keys: pa.Table) -> pa.Array:
    """Whether each row of `rows` has one of `keys` (a table of the id columns), as a boolean array."""
    names = keys.column_names
    numbered = rows.select(names).append_column(ROW, pa.array(range(rows.num_rows), pa.int64()))
    hits = numbered.join(keys.group_by(names).aggregate([]), names, join_type="left semi", use_threads=False)[ROW]
    return pc.is_in(pa.array(range(rows.num_rows), pa.int64()), value_set=hits.combine_chunks())


def changes_in(part: TableFiles) -> bool:
    """Whether a range's TableFiles (iceberg.task) carry changed keys (an upsert table's range with changes)."""
    return part.changed_keys is not None and part.changed_keys.num_rows > 0


def run_files(table: Table, parts: list) -> tuple[list, list]:
    """(data files to delete, data files to add) of a run's commit, from its ranges' TableFiles in (topic,
    partition) order: an append table's files; an upsert table's files, and its current files that hold a changed
    key rewritten without its row. A key changed in several ranges (its changes were not all in one partition)
    keeps the row of the last range that changed it."""
    keyed = [part.changed_keys for part in parts if changes_in(part)]
    if not keyed:
        return [], [data_file for part in parts for data_file in part.data_files]
    added: list = []
    earlier: pa.Table | None = None
    for part in parts:
        if changes_in(part) and earlier is not None and pc.any(holds_keys(earlier, part.changed_keys)).as_py():
            gone, rewritten = _rewrite(table, [_new_file_task(table, f) for f in added], part.changed_keys)
            paths = {data_file.file_path for data_file in gone}
            added = [data_file for data_file in added if data_file.file_path not in paths] + rewritten
        added += part.data_files
        if changes_in(part):
            earlier = part.changed_keys if earlier is None else _concat([earlier, part.changed_keys])
    removed, written = rewrite_without(table, _concat(keyed))
    return removed, written + added


def _new_file_task(table: Table, data_file: DataFile) -> FileScanTask:
    """A scan task of a data file not committed yet: pyiceberg gives a DataFile its spec id when it reads it from a
    manifest, a new one is of the table's default spec."""
    if getattr(data_file, "_spec_id", None) is None:
        data_file.spec_id = table.metadata.default_spec_id
    return FileScanTask(data_file)


def _concat(keys: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(keys, promote_options="permissive")


def rewrite_without(table: Table, keys: pa.Table) -> tuple[list, list]:
    """(data files to delete, data files to add): each data file of the table's current snapshot that holds a row
    of `keys`, and files of its other rows. A file whose bounds hold no key is not read; of a file that holds
    none, only the id columns are."""
    if keys.num_rows == 0 or table.current_snapshot() is None:
        return [], []
    return _rewrite(table, table.scan().plan_files(), keys)


def _rewrite(table: Table, tasks: Iterable[FileScanTask], keys: pa.Table) -> tuple[list, list]:
    """The files of `tasks` that hold a row of `keys`, and files of their other rows: written together at the
    table's target file size, so that small files are merged on the way."""
    schema = table.schema()
    ids = ArrowScan(table.metadata, table.io, schema.select(*keys.column_names), AlwaysTrue())
    whole = ArrowScan(table.metadata, table.io, schema, AlwaysTrue())
    target = int(
        table.metadata.properties.get(
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
        )
    )
    removed: list = []
    written: list = []
    pending: list[pa.Table] = []
    for task in _bounded(table, tasks, keys):
        hit = holds_keys(ids.to_table([task]), keys)
        if not pc.any(hit).as_py():
            continue
        removed.append(task.file)
        pending.append(whole.to_table([task]).filter(pc.invert(hit)))
        if sum(rows.nbytes for rows in pending) >= target:
            written += _written(table, pending)
            pending = []
    return removed, written + _written(table, pending)


def _bounded(table: Table, tasks: Iterable[FileScanTask], keys: pa.Table) -> list:
    """The tasks whose data file may hold one of `keys` by its lower and upper bound of the first id column (an
    integer or string column: their bounds compare as the keys do; a file without bounds may hold any)."""
    field = table.schema().find_field(keys.column_names[0])
    if not isinstance(field.field_type, (IntegerType, LongType, StringType)):
        return list(tasks)
    values = sorted(pc.unique(keys.column(0)).to_pylist())
    kept = []
    for task in tasks:
        lower = (task.file.lower_bounds or {}).get(field.field_id)
        upper = (task.file.upper_bounds or {}).get(field.field_id)
        if lower is None or upper is None:
            kept.append(task)
            continue
        first = bisect.bisect_left(values, from_bytes(field.field_type, lower))
        if first < len(values) and values[first] <= from_bytes(field.field_type, upper):
            kept.append(task)
    return kept


def _written(table: Table, pending: list[pa.Table]) -> list:
    rows = pa.concat_tables(pending) if pending else None
    return list(_dataframe_to_data_files(table.metadata, rows, table.io)) if rows is not None and rows.num_rows else []
