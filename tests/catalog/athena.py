"""A synthesized Glue table read the way Athena reads it, with DuckDB, over a local copy of the bucket.

DuckDB here has no httpfs or avro extension (both are downloads, and this machine reaches no extension
repository), so the bucket's objects are copied into a folder under their keys, and this does what Athena does
with a partition-projected table:

1. every partition column's values from its projection: `integer` (range, interval, digits), `enum` (values),
   `date` (java.time, see java_time.py) and `injected` (the query's one value for it);
2. each combination substituted into `storage.location.template`, giving a prefix; the partition's objects are
   those directly under it, less names starting with `_` or `.` (Hadoop's hidden files);
3. each object read with the table's SerDe and columns: Parquet with `read_parquet` (columns by name, case
   aside; a file column whose type is not the table's fails, as Athena fails the query), JSON lines, gzip or not,
   with `read_json` and the table's types (OpenX's `mapping.<column>` honoured), Avro with fastavro using the
   table's `avro.schema.literal` as the reader schema (Hive's AvroSerDe does the same: writer schema from the file,
   Avro schema resolution to the table's);
4. the rows get the partition columns and `$path`; an optional regular expression on `$path` stands for
   `WHERE regexp_like("$path", ...)`.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime
from pathlib import Path

import duckdb
import fastavro
import pyarrow as pa

from tests.catalog.java_time import JavaTime


class ProjectedTable:
    def __init__(self, table_input: dict, root: Path, java_time: JavaTime):
        """`table_input`: the TableInput of an AWS::Glue::Table as synthesized; `root`: the folder holding the
        bucket's objects under their keys."""
        self.input, self.root, self.java = table_input, root, java_time
        self.parameters = table_input["Parameters"]
        self.storage = table_input["StorageDescriptor"]
        self.columns = [(c["Name"], c["Type"]) for c in self.storage["Columns"]]
        self.partition_keys = [(c["Name"], c["Type"]) for c in table_input["PartitionKeys"]]
        bucket_url = re.match(r"s3://[^/]+/", self.storage["Location"])[0]
        assert self.parameters["storage.location.template"].startswith(bucket_url)
        self._bucket_url = bucket_url

    def select(
        self, now: datetime, injected: dict[str, str] | None = None, path_regex: str | None = None
    ) -> list[dict]:
        """Every row of the table as Athena's `SELECT *` (with `$path`) returns it at time `now`, `injected`
        giving the value of each injected column (`WHERE column = value`)."""
        rows = []
        for values in self._partitions(now, injected or {}):
            prefix = self._location(values)
            for path in self._objects(prefix):
                key = path.relative_to(self.root).as_posix()
                s3_path = self._bucket_url + key
                if path_regex is not None and not re.search(path_regex, s3_path):
                    continue
                for row in self._read(path):
                    rows.append({**row, **{name: self._typed(name, v) for name, v in values.items()}, "$path": s3_path})
        return rows

    def _partitions(self, now: datetime, injected: dict[str, str]):
        choices = []
        for name, _ in self.partition_keys:
            kind = self.parameters[f"projection.{name}.type"].strip().lower()
            if kind == "integer":
                low, high = (int(v) for v in self.parameters[f"projection.{name}.range"].split(","))
                step = int(self.parameters.get(f"projection.{name}.interval", "1"))
                digits = int(self.parameters.get(f"projection.{name}.digits", "0"))
                choices.append([f"{v:0{digits}d}" for v in range(low, high + 1, step)])
            elif kind == "enum":
                choices.append(self.parameters[f"projection.{name}.values"].split(","))
            elif kind == "date":
                prefix = f"projection.{name}."
                projection = {k[len(prefix) :]: v for k, v in self.parameters.items() if k.startswith(prefix)}
                choices.append(self.java.projected(projection, now))
            elif kind == "injected":
                if name not in injected:
                    raise ValueError(f"Athena refuses the query: injected column {name} needs one value")
                choices.append([injected[name]])
            else:
                raise ValueError(f"projection type {kind}")
        names = [name for name, _ in self.partition_keys]
        return [dict(zip(names, combination)) for combination in itertools.product(*choices)]

    def _location(self, values: dict[str, str]) -> Path:
        text = self.parameters["storage.location.template"]
        for name, value in values.items():
            text = text.replace(f"${{{name}}}", value)
        assert "${" not in text, text
        return self.root / text[len(self._bucket_url) :]

    def _objects(self, prefix: Path) -> list[Path]:
        if not prefix.is_dir():
            return []
        return sorted(p for p in prefix.iterdir() if p.is_file() and not p.name.startswith(("_", ".")))

    def _typed(self, name: str, text: str):
        kind = dict(self.partition_keys)[name]
        return int(text) if kind in ("int", "bigint") else text

    def _read(self, path: Path) -> list[dict]:
        serde = self.storage["SerdeInfo"]["SerializationLibrary"]
        if serde.endswith("ParquetHiveSerDe"):
            return self._parquet(path)
        if serde == "org.openx.data.jsonserde.JsonSerDe":
            return self._json(path)
        if serde.endswith("AvroSerDe"):
            return self._avro(path)
        raise ValueError(serde)

    def _parquet(self, path: Path) -> list[dict]:
        described = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
        in_file = {name.lower(): (name, kind) for name, kind, *_ in described}
        selected = []
        for name, hive in self.columns:
            expected = duckdb_type(hive)
            if name not in in_file:
                selected.append(f'NULL::{expected} AS "{name}"')
                continue
            actual_name, actual = in_file[name]
            if _normal(actual) != _normal(expected):
                raise TypeError(f"{path.name}: column {name} is {actual} in the file, {expected} in the table")
            selected.append(f'"{actual_name}" AS "{name}"')
        return _dicts(duckdb.sql(f"SELECT {', '.join(selected)} FROM read_parquet('{path}')"))

    def _json(self, path: Path) -> list[dict]:
        serde = self.storage["SerdeInfo"].get("Parameters", {})
        keys = {name: serde.get(f"mapping.{name}", name) for name, _ in self.columns}
        columns = ", ".join(f"'{keys[name]}': '{duckdb_type(hive)}'" for name, hive in self.columns)
        compression = "gzip" if path.name.endswith(".gz") else "none"
        relation = duckdb.sql(
            f"SELECT * FROM read_json('{path}', format='newline_delimited', "
            f"columns={{{columns}}}, compression='{compression}')"
        )
        return [{name: row[keys[name]] for name, _ in self.columns} for row in _dicts(relation)]

    def _avro(self, path: Path) -> list[dict]:
        literal = json.loads(self.storage["SerdeInfo"]["Parameters"]["avro.schema.literal"])
        with path.open("rb") as f:
            records = list(fastavro.reader(f, reader_schema=literal))
        names = {f["name"].lower(): f["name"] for f in literal["fields"]}
        assert [name for name, _ in self.columns] == list(names), "columns follow avro.schema.literal"
        if not records:
            return []
        connection = duckdb.connect()
        connection.register("avro_rows", pa.Table.from_pylist([{n: r[names[n]] for n in names} for r in records]))
        selected = ", ".join(f'CAST("{name}" AS {duckdb_type(hive)}) AS "{name}"' for name, hive in self.columns)
        return _dicts(connection.sql(f"SELECT {selected} FROM avro_rows"))


def _dicts(relation) -> list[dict]:
    names = relation.columns
    return [dict(zip(names, row)) for row in relation.fetchall()]


def _normal(duck: str) -> str:
    return re.sub(r"\s+", "", duck.upper()).replace('"', "")


_SIMPLE = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "VARCHAR",
    "binary": "BLOB",
    "date": "DATE",
    "timestamp": "TIMESTAMP WITH TIME ZONE",
}


def duckdb_type(hive: str) -> str:
    """The DuckDB type of a Hive type string (Athena reads a Parquet UTC timestamp as an instant)."""
    kind, rest = _parse(hive.replace(" ", ""), 0)
    assert rest == len(hive.replace(" ", "")), hive
    return kind


def _parse(text: str, i: int) -> tuple[str, int]:
    match = re.compile(r"[a-z]+").match(text, i)
    word, i = match[0], match.end()
    if word in _SIMPLE:
        return _SIMPLE[word], i
    if word == "decimal":
        close = text.index(")", i)
        return f"DECIMAL{text[i : close + 1]}", close + 1
    assert text[i] == "<", text
    i += 1
    if word == "array":
        item, i = _parse(text, i)
        return f"{item}[]", i + 1
    if word == "map":
        key, i = _parse(text, i)
        value, i = _parse(text, i + 1)
        return f"MAP({key}, {value})", i + 1
    assert word == "struct", word
    members = []
    while text[i] != ">":
        colon = text.index(":", i)
        name = text[i:colon]
        member, i = _parse(text, colon + 1)
        members.append(f'"{name}" {member}')
        if text[i] == ",":
            i += 1
    return f"STRUCT({', '.join(members)})", i + 1
