"""Upsert tables in tests: a CDC stream, a model of the source table it describes, and the table read by three
readers: pyiceberg's scan, DuckDB's iceberg extension, and a reader of our own (the metadata JSON, fastavro for the
manifest list and manifests, pyarrow for the Parquet data files), which also checks that the table holds no delete
files (copy-on-write)."""

from __future__ import annotations

import io
import json
import random

import fastavro
import orjson
import pyarrow.parquet as pq
from confluent_kafka import Producer

from tests.iceberg.duckdb_reader import duckdb_rows
from tests.iceberg.tables import table_of


def produce_changes(bootstrap: str, topic: str, changes: list[tuple[int, bytes | None, bytes | None]]) -> None:
    """(partition, key, value) in order; each partition's last record is sent alone after a flush (as
    devtools.producer.produce does)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    last = {partition: i for i, (partition, _, _) in enumerate(changes)}
    for i, (partition, key, value) in enumerate(changes):
        if i not in last.values():
            producer.produce(topic, value=value, key=key, partition=partition)
    producer.flush(60)
    for i in sorted(last.values()):
        partition, key, value = changes[i]
        producer.produce(topic, value=value, key=key, partition=partition)
    assert producer.flush(60) == 0


class SourceTable:
    """A database table whose changes a CDC stream carries, with its model: id -> row."""

    def __init__(self, seed: int, partitions: int = 2):
        self.rng, self.partitions = random.Random(seed), partitions
        self.rows: dict[int, dict] = {}
        self.version = 0

    def changes(self, count: int, ids: int = 40, tombstones: bool = True) -> list[tuple[int, dict | None, str]]:
        """`count` random changes over ids 0..ids-1: (id, row or None for a delete, op), applied to the model."""
        made = []
        for _ in range(count):
            key = self.rng.randrange(ids)
            self.version += 1
            if key in self.rows and self.rng.random() < 0.25:
                op = "tombstone" if tombstones and self.rng.random() < 0.5 else "d"
                made.append((key, None, op))
                del self.rows[key]
                continue
            row = {"id": key, "name": f"n{self.version}", "amount": self.version * 10}
            made.append((key, row, "u" if key in self.rows else "c"))
            self.rows[key] = row
        return made

    def cdc_records(self, changes, cdc_field: str = "__op") -> list[tuple[int, bytes, bytes | None]]:
        """As flat records with the operation in `cdc_field` (a delete carries the id), keyed by JsonConverter
        keys `{"id": n}`; a key's changes all go to one partition."""
        records = []
        for key, row, op in changes:
            value = None if op == "tombstone" else {**(row or {"id": key}), cdc_field: op}
            records.append(
                (key % self.partitions, orjson.dumps({"id": key}), None if value is None else orjson.dumps(value))
            )
        return records

    def expected(self, extra: dict | None = None) -> list[dict]:
        return sorted(
            ({**row, **(extra or {}).get(row["id"], {})} for row in self.rows.values()), key=lambda r: r["id"]
        )


def pyiceberg_rows(config, columns=("id", "name", "amount"), topic: str | None = None) -> list[dict]:
    table = table_of(config, topic)
    found = table.scan(selected_fields=columns).to_arrow().to_pylist() if table else []
    return sorted(found, key=lambda r: r["id"])


def duckdb_table_rows(config, columns=("id", "name", "amount"), topic: str | None = None) -> list[dict]:
    """The table as DuckDB's iceberg extension reads it (tests/iceberg/duckdb_reader.py)."""
    table = table_of(config, topic)
    found = duckdb_rows(table.metadata_location, columns) if table else []
    return sorted(found, key=lambda r: r["id"])


def own_rows(s3, config, columns=("id", "name", "amount"), topic: str | None = None) -> list[dict]:
    """The current snapshot's live data files as the Iceberg spec lays them out, read without pyiceberg; asserts
    that no manifest holds delete files."""
    table = table_of(config, topic)
    if table is None:
        return []
    metadata = json.loads(_get(s3, table.metadata_location))
    current = metadata.get("current-snapshot-id")
    snapshot = next((s for s in metadata["snapshots"] if s["snapshot-id"] == current), None)
    if snapshot is None:
        return []
    found = []
    for manifest in fastavro.reader(io.BytesIO(_get(s3, snapshot["manifest-list"]))):
        assert manifest["content"] == 0, "a delete manifest: the table is not copy-on-write"
        for entry in fastavro.reader(io.BytesIO(_get(s3, manifest["manifest_path"]))):
            if entry["status"] != 2:  # 2: DELETED
                data = pq.read_table(io.BytesIO(_get(s3, entry["data_file"]["file_path"])), columns=list(columns))
                found += data.to_pylist()
    return sorted(found, key=lambda r: r["id"])


def _get(s3, url: str) -> bytes:
    bucket, key = url.removeprefix("s3://").split("/", 1)
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
