"""Staged commits of a continuous IcebergFormat run: what a task closed for one topic-partition, handed to the
driver, which appends it to the table (target/iceberg_tables/stream_commit.py).

A stage is a `STAGE#<topic>#<partition>` item of the offsets table (`sink_engine.offsets.layout`): the offsets
commit it asks for (`OffsetCommit`'s fields) and the paths of the Iceberg manifests (Avro, Iceberg's own description
of data files: statistics, bounds, partition) that the task wrote beside the table's metadata, with, for an upsert
table, a Parquet file of the keys each part's changes replace (one part per cut the stage spans). The item stays a
few hundred bytes whatever the files (DynamoDB's item limit is 400 KB,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items), one Query reads
every stage of a connector, and its put can be conditional: in a transaction with the lease check, and never over a
stage of the same start (a partition has one stage per committed offset: the first one staged is the one committed).
A stage whose start is no longer the partition's committed offset is spent (committed, or overtaken by a recovery)
and is ignored; the next stage of the partition replaces it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from botocore.exceptions import ClientError
from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestContent, ManifestEntry, ManifestEntryStatus, ManifestFile, write_manifest
from pyiceberg.table import Table

from sink_engine.aws_types import DynamoDBClient
from sink_engine.errors import CommitConflictError
from sink_engine.model import TopicPartition
from sink_engine.offsets import layout
from sink_engine.offsets.lease import LeaseToken
from sink_engine.offsets.store import OffsetCommit
from sink_engine.offsets.transactions import CANCELLED, transact_write
from sink_engine.target.iceberg_tables.settings import STAGED_FILES

_NONE = -1  # `start` of a partition's first commit (nothing committed yet)


@dataclass(frozen=True)
class StagePart:
    """Data files described by a manifest (path, partition spec id; None: no data file) and, of an upsert table,
    the keys whose rows they replace (the path of a Parquet file of the id columns; None: an append)."""

    manifest: tuple[str, int] | None
    keys: str | None = None

    @property
    def paths(self) -> list[str]:
        return [path for path in (self.manifest[0] if self.manifest else None, self.keys) if path is not None]


@dataclass(frozen=True)
class Stage:
    """One topic-partition's staged commit: `commit` (expected = the committed offset it starts from) and its
    parts, in offset order (an upsert table's later part replaces the rows of an earlier part's keys)."""

    commit: OffsetCommit
    parts: tuple[StagePart, ...]
    files: int
    records: int


def write_part(table: Table, data_files: list, keys: pa.Table | None) -> StagePart:
    """Stage data files (`write_manifest`) and the keys of their changes (a Parquet file beside the manifest)."""
    manifest = write_manifest_of(table, data_files) if data_files else None
    if keys is None or keys.num_rows == 0:
        return StagePart(manifest)
    path = f"{table.location()}/{STAGED_FILES}{uuid.uuid4()}-keys.parquet"
    with table.io.new_output(path).create() as stream:
        pq.write_table(keys, stream)
    return StagePart(manifest, path)


def read_part(io: FileIO, part: StagePart) -> tuple[list, pa.Table | None]:
    """(data files, changed keys) of a staged part."""
    files = read_data_files(io, part.manifest) if part.manifest else []
    if part.keys is None:
        return files, None
    with io.new_input(part.keys).open() as stream:
        return files, pq.read_table(stream)


def write_manifest_of(table: Table, data_files: list) -> tuple[str, int]:
    """Describe `data_files` in a manifest beside the table's metadata, with the table's current partition spec (as
    pyiceberg's append describes the files it adds); its path and spec id. Each name is unique: a manifest is
    written once."""
    spec = table.spec()
    path = f"{table.location()}/{STAGED_FILES}{uuid.uuid4()}.avro"
    with write_manifest(
        format_version=table.metadata.format_version,
        spec=spec,
        schema=table.schema(),
        output_file=table.io.new_output(path),
        snapshot_id=0,  # not kept: the driver appends the data files, in manifests of its snapshot
        avro_compression="deflate",
    ) as writer:
        for data_file in data_files:
            writer.add_entry(
                ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=0, data_file=data_file)
            )
    return path, spec.spec_id


def read_data_files(io: FileIO, manifest: tuple[str, int]) -> list:
    """The data files a staged manifest (path, spec id) describes (each with its spec id)."""
    path, spec_id = manifest
    entries = ManifestFile.from_args(
        manifest_path=path,
        manifest_length=0,
        partition_spec_id=spec_id,
        content=ManifestContent.DATA,
        sequence_number=0,
        min_sequence_number=0,
        added_snapshot_id=0,
    ).fetch_manifest_entry(io)
    return [entry.data_file for entry in entries]


class StageStore:
    def __init__(self, dynamodb: DynamoDBClient, table: str) -> None:
        self._db, self._table = dynamodb, table

    def staged(self, connector: str) -> dict[TopicPartition, Stage]:
        """Every stage of the connector (strongly consistent), spent ones included."""
        found = {}
        for item in layout.items_under(self._db, self._table, connector, layout.STAGE_PREFIX):
            stage = _from_item(item)
            found[stage.commit.tp] = stage
        return found

    def put(self, token: LeaseToken, stage: Stage) -> None:
        """Stage it, if the lease is still this run's and no stage of the same start exists; else
        CommitConflictError. A retry whose first try was applied (its answer lost) finds its own stage: done."""
        item = _to_item(token, stage)
        put = {
            "Put": {
                "TableName": self._table,
                "Item": item,
                "ConditionExpression": "attribute_not_exists(sk) OR #start <> :start",
                "ExpressionAttributeNames": {"#start": "start"},
                "ExpressionAttributeValues": {":start": item["start"]},
            }
        }
        try:
            transact_write(self._db, [token.fencing_check(self._table), put])
        except ClientError as e:
            if e.response["Error"]["Code"] != CANCELLED:
                raise
            if self._holds(token.connector, stage):
                return
            tp = stage.commit.tp
            raise CommitConflictError(token.connector, tp.topic, tp.partition, stage.commit.expected) from None

    def _holds(self, connector: str, stage: Stage) -> bool:
        key = layout.key(connector, layout.stage_sk(stage.commit.tp.topic, stage.commit.tp.partition))
        item = self._db.get_item(TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        return item is not None and _from_item(item).parts == stage.parts


def _to_item(token: LeaseToken, stage: Stage) -> dict:
    commit = stage.commit
    item = {
        **layout.key(token.connector, layout.stage_sk(commit.tp.topic, commit.tp.partition)),
        "topic": {"S": commit.tp.topic},
        "partition": {"N": str(commit.tp.partition)},
        "start": {"N": str(_NONE if commit.expected is None else commit.expected)},
        "next_offset": {"N": str(commit.next_offset)},
        "parts": {"L": [{"M": _part_item(part)} for part in stage.parts]},
        "files": {"N": str(stage.files)},
        "records": {"N": str(stage.records)},
        "dead_letters": _counts(commit.dead_letters),
        "skipped": _counts(commit.skipped),
        "epoch": {"N": str(token.epoch)},
    }
    for name, value in (("first_offset", commit.start_offset), ("dlq_scan_from", commit.dlq_scan_from)):
        if value is not None:
            item[name] = {"N": str(value)}
    if commit.last_file is not None:
        item["last_file"] = {"S": commit.last_file}
    return item


def _from_item(item: dict) -> Stage:
    number = lambda name: int(item[name]["N"]) if name in item else None  # noqa: E731
    start = int(item["start"]["N"])
    commit = OffsetCommit(
        TopicPartition(item["topic"]["S"], int(item["partition"]["N"])),
        None if start == _NONE else start,
        int(item["next_offset"]["N"]),
        item["last_file"]["S"] if "last_file" in item else None,
        _from_counts(item["dead_letters"]),
        number("dlq_scan_from"),
        _from_counts(item["skipped"]),
        number("first_offset"),
    )
    parts = tuple(_part_of(p["M"]) for p in item["parts"]["L"])
    return Stage(commit, parts, int(item["files"]["N"]), int(item["records"]["N"]))


def _part_item(part: StagePart) -> dict:
    item = {}
    if part.manifest is not None:
        item.update({"manifest": {"S": part.manifest[0]}, "spec_id": {"N": str(part.manifest[1])}})
    if part.keys is not None:
        item["keys"] = {"S": part.keys}
    return item


def _part_of(item: dict) -> StagePart:
    manifest = (item["manifest"]["S"], int(item["spec_id"]["N"])) if "manifest" in item else None
    return StagePart(manifest, item["keys"]["S"] if "keys" in item else None)


def _counts(counts: dict | None) -> dict:
    return {"M": {name: {"N": str(n)} for name, n in (counts or {}).items()}}


def _from_counts(attribute: dict) -> dict:
    return {name: int(value["N"]) for name, value in attribute["M"].items()}
