"""Iceberg tables (format.class=IcebergFormat, this folder): tasks write data files, the driver appends
them in one snapshot per table that records the offsets, before the offsets commit; a run first moves DynamoDB
forward to a snapshot committed before a crash. A continuous run's tasks stage their data files at each
`iceberg.control.commit.interval-ms` boundary and its driver appends them (target/iceberg_tables/stream_stage.py,
stream_commit.py). pyiceberg is imported only by the steps that use it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING

from sink_engine.aws_types import DynamoDBClient, S3Client
from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.failpoints import failpoint
from sink_engine.run.settings import RunSettings
from sink_engine.run.wall_clock import WallClockCuts
from sink_engine.target.contract import SUPPORTED, Capabilities, Capability, ContinuousTarget
from sink_engine.target.iceberg_tables import doctor, lake_formation
from sink_engine.target.iceberg_tables.settings import CatalogKeys, IcebergSettings, check_rest_catalog, table_template

if TYPE_CHECKING:
    from sink_engine.doctor.checks import Check
    from sink_engine.model import PartitionRange, TaskResult
    from sink_engine.offsets import Leases, LeaseToken, OffsetStore
    from sink_engine.source.reader import RangeReader
    from sink_engine.storage.uploader import Uploader
    from sink_engine.target.contract import CommitCoordinator, StreamCommits
    from sink_engine.target.iceberg_tables.commit import TableCommits
    from sink_engine.task.output import StreamOutput
    from sink_engine.task.settings import TaskSettings

# Settings of the S3 object path that have no meaning for a table, with why.
_NOT_FOR_TABLES = {
    "behavior.on.null.values": (
        "write",
        "tombstones cannot be table rows; use fail or ignore (an upsert table's tombstones delete rows: "
        "iceberg.tables.upsert-mode-enabled)",
    ),
    "store.kafka.keys": (True, "set iceberg.tables.kafka-metadata-enabled for a _kafka_metadata_key column"),
    "store.kafka.headers": (True, "headers are not written to tables"),
}


def _refuse_object_settings(config: SinkConfig, upsert: bool, routed: bool) -> None:
    """ConfigError naming the first key of _NOT_FOR_TABLES set to the value that has no meaning for a table (or
    for tables named by the records: `routed`)."""
    for key, (value, why) in _NOT_FOR_TABLES.items():
        if key == "behavior.on.null.values" and upsert and routed and config[key] == value:
            raise ConfigError(
                key,
                "write is not supported when records are routed to tables (iceberg.tables.dynamic-enabled, "
                "iceberg.tables.route-field or several iceberg.tables): a tombstone has no value to route it by "
                "(use ignore; with Debezium, delete.handling.mode=rewrite makes deletes values)",
            )
        if key == "behavior.on.null.values" and upsert:
            continue  # an upsert table's tombstone deletes the row its key names
        if config[key] == value:
            raise ConfigError(key, f"{value} is not supported with format.class=IcebergFormat: {why}")


class IcebergTablesTarget(ContinuousTarget):
    CAPABILITIES = Capabilities(
        key_prefixes=("iceberg.",),
        libraries={"pyiceberg": "pyiceberg"},
        continuous=SUPPORTED,
        verify=Capability(False, reason="verify reads S3 objects; an Iceberg table's snapshots are its record"),
        tables=True,
    )

    @property
    def capabilities(self) -> Capabilities:
        static = self.settings.static_routes
        if static is not None:  # as fan-out by field: a continuous run's stages are per topic-partition, one table
            key = "iceberg.tables.route-field" if static.field else "iceberg.tables"
            why = "static routing to several tables is written by bounded runs only (not built yet)"
            return replace(self.CAPABILITIES, continuous=Capability(False, key, why))
        if self.settings.route_field is None:
            return self.CAPABILITIES
        fan_out = "fan-out by field is written by bounded runs only (not built yet)"
        return replace(self.CAPABILITIES, continuous=Capability(False, "iceberg.tables.dynamic-enabled", fan_out))

    @cached_property
    def settings(self) -> IcebergSettings:
        return IcebergSettings.from_config(self.config)

    @cached_property
    def _run(self) -> RunSettings:
        return RunSettings.from_config(self.config)

    @cached_property
    def _tables(self) -> TableCommits:
        """The driver's snapshot commits: what `recover` saw is what `commit` checks against."""
        from sink_engine.target.iceberg_tables.commit import TableCommits  # imports pyiceberg

        return TableCommits(self.settings)

    def validate(self) -> None:
        """A table, a catalog, and no S3-object-only setting."""
        config = self.config
        table_template(config)
        keys = CatalogKeys.from_config(config)
        if keys.type is None:
            raise ConfigError("iceberg.catalog.type", "is required with format.class=IcebergFormat (sql, glue or rest)")
        if keys.type == "rest":
            check_rest_catalog(config)
        if keys.type == "sql" and not keys.uri:
            raise ConfigError("iceberg.catalog.uri", f"is required with iceberg.catalog.type={keys.type}")
        if keys.type == "sql" and not keys.warehouse:
            raise ConfigError(
                "iceberg.catalog.warehouse", "is required with iceberg.catalog.type=sql (s3://bucket/prefix)"
            )
        iceberg = IcebergSettings.from_config(config)  # the partitioner must have an Iceberg spec, a router one table
        _refuse_object_settings(config, upsert=iceberg.upsert is not None, routed=iceberg.routed)

    def init(self) -> list[str]:
        # imports pyiceberg
        from sink_engine.target.iceberg_tables.catalog import ensure_namespace, ensure_namespace_named, open_catalog

        if self.settings.static_routes is not None:
            catalog = open_catalog(self.settings)
            return [
                f"namespace of {table} in catalog {self.settings.catalog}: "
                f"{'created' if ensure_namespace(catalog, table) else 'exists'}"
                for table in self.settings.static_routes.tables
            ]
        if self.settings.table_template is None and not self.settings.namespaces:
            return [
                f"tables named by the records' {self.settings.route_field}: their namespaces must exist (or be "
                "declared: iceberg.tables.route-namespaces, iceberg.tables.default-namespace)"
            ]
        if self.settings.table_template is None:  # fan-out by field, into the namespaces it declares
            catalog = open_catalog(self.settings)
            return [
                f"namespace {namespace} in catalog {self.settings.catalog}: "
                f"{'created' if ensure_namespace_named(catalog, namespace) else 'exists'}"
                for namespace in self.settings.namespaces
            ]
        created = ensure_namespace(open_catalog(self.settings), self.settings.table_template)
        return [
            f"namespace {self.settings.namespace} in catalog {self.settings.catalog}: "
            f"{'created' if created else 'exists'}"
        ]

    def describe(self) -> list[str]:
        """With fan-out by field: where records' tables may lie (target/iceberg_tables/route_namespaces.py)."""
        route, namespaces = self.settings.route_field, self.settings.route_namespaces
        if route is None:
            return []
        bare = (
            f"goes to namespace {namespaces.default} (iceberg.tables.default-namespace)"
            if namespaces.default
            else "is a bad record (iceberg.tables.default-namespace would give it a namespace)"
        )
        reach = (
            f"{', '.join(namespaces.declared)}; a table in any other is a bad record naming its offset (deployed, "
            "the job role is granted these alone)"
            if namespaces.declared
            else "any (none declared: synthesis refuses to deploy it; iceberg.tables.route-namespaces)"
        )
        return [
            f"fan-out by field: each record goes to the table its {route} names (lower-cased, `namespace.table`)",
            f"  a bare table name {bare}",
            f"  namespaces records may reach: {reach}",
        ]

    def write_range(
        self,
        settings: TaskSettings,
        planned: PartitionRange,
        client: S3Client | None = None,
        progress_dir: str | None = None,
        reader: RangeReader | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> TaskResult:
        from sink_engine.target.iceberg_tables.task import run_table_range  # imports pyiceberg

        return run_table_range(settings, self.settings, self.config.name, planned, client, progress_dir, reader, stop)

    def stream_output(self, settings: TaskSettings, planned: PartitionRange, uploader: Uploader) -> StreamOutput:
        from sink_engine.target.iceberg_tables.task import TableOutput  # imports pyiceberg

        return TableOutput(self.settings, planned, self.config.name)

    @property
    def stream_cut_interval_ms(self) -> int:
        return self.settings.commit_interval_ms

    def stream_commits(
        self, dynamodb: DynamoDBClient, store: OffsetStore, token: LeaseToken, uploader: Uploader
    ) -> StreamCommits:
        # both import pyiceberg
        from sink_engine.target.iceberg_tables.staging import StageStore
        from sink_engine.target.iceberg_tables.stream_stage import TableStaging  # imports pyarrow

        return TableStaging(StageStore(dynamodb, self._run.offsets_table), store, token, uploader)

    def stream_coordinator(
        self, dynamodb: DynamoDBClient, store: OffsetStore, leases: Leases, token: LeaseToken, clock: Callable[[], int]
    ) -> CommitCoordinator | None:
        # both import pyiceberg
        from sink_engine.target.iceberg_tables.staging import StageStore
        from sink_engine.target.iceberg_tables.stream_commit import StagedCommits  # imports pyarrow

        return StagedCommits(
            self.settings,
            self._tables,
            StageStore(dynamodb, self._run.offsets_table),
            store,
            leases,
            token,
            self._run.lease_ms,
            self.settings.commit_interval_ms,
            WallClockCuts.from_config(self.config).zone,
            clock,
        )

    def recover(self, store: OffsetStore, token: LeaseToken, topics: set[str]) -> bool:
        return self._tables.recover(store, token, topics)

    def commit(self, results: list[TaskResult], leases: Leases, token: LeaseToken, lease_ms: int) -> None:
        self._tables.commit(results, leases, token, lease_ms)
        failpoint("after_snapshot_before_commit")

    def doctor_checks(self) -> tuple[Check, ...]:
        return (*doctor.CHECKS, *lake_formation.CHECKS)
