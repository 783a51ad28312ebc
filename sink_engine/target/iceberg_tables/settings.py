"""IcebergFormat's keys, read once from the config (IcebergSettings): which table a topic goes to, the pyiceberg
catalog and its properties, what the writer may do to a table, the table's partition spec and extra columns.

No pyiceberg import here: config validation (and the DLQ replay Lambda, which validates configs) uses this module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.convert.settings import ConverterSettings
from sink_engine.errors import ConfigError
from sink_engine.partition.settings import PartitionSettings
from sink_engine.target.iceberg_tables.route_namespaces import RouteNamespaces
from sink_engine.target.iceberg_tables.spec import RECORD_TIME_COLUMN, extra_columns, partition_fields
from sink_engine.target.iceberg_tables.static_routes import StaticRoutes
from sink_engine.transform.settings import TransformSettings

TOPIC_PLACEHOLDER = "${topic}"
CATALOG_PREFIX = "iceberg.catalog."
TABLE_PROPS_PREFIX = "iceberg.tables.auto-create-props."
_DECLARED_CATALOG_KEYS = ("type", "uri", "warehouse")
# an S3 table bucket's ARN, the warehouse of S3 Tables' Iceberg REST endpoint
S3_TABLES_BUCKET_ARN = re.compile(r"arn:aws[a-z-]*:s3tables:(?P<region>[a-z0-9-]+):\d{12}:bucket/[a-z0-9][a-z0-9-]*")
# where a continuous run's task stages files, under its table's location (target/iceberg_tables/staging.py): the
# deployed job role
# may delete these objects and no other (infra/job_policy.py)
STAGED_FILES = "metadata/sink-engine-stage-"


@dataclass(frozen=True)
class IcebergSettings:
    catalog: str  # iceberg.catalog, the catalog's name
    catalog_properties: dict[str, str]  # pyiceberg's, with the engine's defaults (`catalog_properties`)
    table_template: str | None  # iceberg.tables, checked (`table_template`); None: routed (`routed`)
    auto_create: bool  # iceberg.tables.auto-create-enabled
    evolve_schema: bool  # iceberg.tables.evolve-schema-enabled
    table_properties: dict[str, str]  # of an auto-created table: iceberg.tables.auto-create-props.*
    partition_fields: tuple[tuple[str, str, str], ...]  # (source column, transform, partition field name)
    extra_columns: tuple[str, ...]  # Kafka metadata, _record_timestamp (spec.extra_columns)
    timestamp_field: str | None  # timestamp.field, read into _record_timestamp; None without that column
    route: Callable[[str], str]  # the topic `transforms` routes a topic's records to: a table is the routed name's
    upsert: UpsertSettings | None = None  # iceberg.tables.upsert-mode-enabled
    commit_interval_ms: int = 60_000  # iceberg.control.commit.interval-ms: a continuous run's snapshot interval
    route_field: str | None = None  # iceberg.tables.route-field with iceberg.tables.dynamic-enabled
    static_routes: StaticRoutes | None = None  # several tables of iceberg.tables, or route-regexes
    # with route_field: iceberg.tables.default-namespace and iceberg.tables.route-namespaces
    route_namespaces: RouteNamespaces = RouteNamespaces()
    commit_threads: int = 8  # iceberg.control.commit.threads: tables whose snapshots the driver commits at once

    @classmethod
    def from_config(cls, config: SinkConfig) -> IcebergSettings:
        """ConfigError naming the key when the table, the partitioner or a router has no Iceberg meaning."""
        partitioning = PartitionSettings.from_config(config)
        extra = extra_columns(partitioning, config["iceberg.tables.kafka-metadata-enabled"])
        return cls(
            config["iceberg.catalog"],
            catalog_properties(config),
            table_template(config),
            config["iceberg.tables.auto-create-enabled"],
            config["iceberg.tables.evolve-schema-enabled"],
            table_properties(config),
            tuple(partition_fields(partitioning)),
            extra,
            partitioning.timestamp_field if RECORD_TIME_COLUMN in extra else None,
            _topic_route(config),
            UpsertSettings.from_config(config),
            config["iceberg.control.commit.interval-ms"],
            route_field(config),
            StaticRoutes.from_config(config, config["iceberg.tables.dynamic-enabled"]),
            RouteNamespaces.from_config(config, config["iceberg.tables.dynamic-enabled"]),
            config["iceberg.control.commit.threads"],
        )

    def table_identifier(self, topic: str) -> str:
        """The table that records of `topic` go to: that of the topic the routers of `transforms` make of it. Not
        for a routed connector (`routed`)."""
        assert self.table_template is not None, "records are routed to their tables (iceberg.tables.route-field)"
        return self.table_template.replace(TOPIC_PLACEHOLDER, topic_as_name(self.route(topic)))

    @property
    def routed(self) -> bool:
        """Whether each record goes to tables of its own: fan-out by field (`route_field`) or static routing
        (`static_routes`), through target/iceberg_tables/routing.py's writer."""
        return self.route_field is not None or self.static_routes is not None

    @property
    def deletes_spent_stages(self) -> bool:
        """Whether the driver deletes a continuous run's spent staged files: not in an S3 table bucket, which serves
        no DeleteObject ("Supported Amazon S3 object-level API operations for S3 Tables",
        https://docs.aws.amazon.com/AmazonS3/latest/API/developing-s3-tables-APIs.html) and removes files no snapshot
        references itself ("Maintenance for table buckets",
        https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-table-buckets-maintenance.html)."""
        return not S3_TABLES_BUCKET_ARN.fullmatch(self.catalog_properties.get("warehouse") or "")

    @property
    def namespace(self) -> str | None:
        """The namespace of `iceberg.tables` (None when records name their tables)."""
        return self.table_template.rsplit(".", 1)[0] if self.table_template else None

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces the connector's tables are in, as known before any record: that of `iceberg.tables`, of
        each statically routed table, or those a fan-out declares (none when it declares none)."""
        if self.static_routes is not None:
            return tuple(dict.fromkeys(t.rsplit(".", 1)[0] for t in self.static_routes.tables))
        return (self.namespace,) if self.namespace else self.route_namespaces.declared


@dataclass(frozen=True)
class CatalogKeys:
    """The declared `iceberg.catalog.*` keys as the connector file sets them (None: unset), which the deployment
    checks judge; IcebergSettings.catalog_properties holds them with the engine's defaults added (a REST catalog's
    S3 Tables endpoint among them), so it cannot tell a key set from a default. The target's validation judges
    them too."""

    type: str | None  # iceberg.catalog.type
    uri: str | None  # iceberg.catalog.uri
    warehouse: str | None  # iceberg.catalog.warehouse

    @classmethod
    def from_config(cls, config: SinkConfig) -> CatalogKeys:
        return cls(config["iceberg.catalog.type"], config["iceberg.catalog.uri"], config["iceberg.catalog.warehouse"])


ID_COLUMNS_KEY = "iceberg.table.{}.id-columns"


@dataclass(frozen=True)
class UpsertSettings:
    """Upsert mode: each table's id columns (its identifier fields) and the field naming a change's operation."""

    default_id_columns: tuple[str, ...]  # iceberg.tables.default-id-columns
    table_id_columns: dict[str, tuple[str, ...]]  # iceberg.table.<table>.id-columns
    cdc_field: str | None  # iceberg.tables.cdc-field
    key_converter: ConverterSettings  # key.converter: tombstones' keys name the rows they delete

    @classmethod
    def from_config(cls, config: SinkConfig) -> UpsertSettings | None:
        """None without upsert mode; ConfigError naming the key of an upsert key set without it, or of an upsert
        table without id columns."""
        tables = {
            key[len("iceberg.table.") : -len(".id-columns")]: _columns(value)
            for key, value in config.passthrough.items()
            if key.startswith("iceberg.table.") and key.endswith(".id-columns")
        }
        unknown = [
            k
            for k in config.passthrough
            if k.startswith("iceberg.table.") and not k.endswith((".id-columns", ".route-regex"))
        ]
        if unknown:
            raise ConfigError(
                unknown[0],
                "is unknown: a table's keys are `iceberg.table.<namespace.table>.id-columns` and `.route-regex`",
            )
        upsert = config["iceberg.tables.upsert-mode-enabled"]
        default = tuple(config["iceberg.tables.default-id-columns"] or ())
        if not upsert:
            for key, value in (
                ("iceberg.tables.default-id-columns", default),
                ("iceberg.tables.cdc-field", config["iceberg.tables.cdc-field"]),
                *((ID_COLUMNS_KEY.format(t), c) for t, c in tables.items()),
            ):
                if value:
                    raise ConfigError(key, "applies to upsert tables only: set iceberg.tables.upsert-mode-enabled")
            return None
        settings = cls(
            default, tables, config["iceberg.tables.cdc-field"] or None, ConverterSettings.from_config(config, "key")
        )
        template = table_template(config)
        static = StaticRoutes.from_config(config, config["iceberg.tables.dynamic-enabled"])
        if static is not None:
            for table in static.tables:
                settings.id_columns(table)
        elif template is not None and TOPIC_PLACEHOLDER not in template:
            settings.id_columns(template)
        elif not default:
            raise ConfigError(
                "iceberg.tables.default-id-columns",
                "is required with iceberg.tables.upsert-mode-enabled and a `${topic}` table pattern or tables named "
                "by a field (iceberg.tables.dynamic-enabled)",
            )
        return settings

    def id_columns_key(self, identifier: str) -> str:
        """The key that gives the table its id columns."""
        if identifier in self.table_id_columns:
            return ID_COLUMNS_KEY.format(identifier)
        return "iceberg.tables.default-id-columns"

    def id_columns(self, identifier: str) -> tuple[str, ...]:
        columns = self.table_id_columns.get(identifier) or self.default_id_columns
        if not columns:
            raise ConfigError(
                ID_COLUMNS_KEY.format(identifier),
                "an upsert table needs id columns: set it or iceberg.tables.default-id-columns",
            )
        return columns


def _columns(value: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in value.split(",") if c.strip())


def _topic_route(config: SinkConfig) -> Callable[[str], str]:
    """`transforms`' routing of a topic (TransformSettings.topic_router); a range's records go to one table, so a
    router that routes by record (TimestampRouter, a router behind a predicate) is a ConfigError naming it."""

    return TransformSettings.from_config(config).required_topic_router(
        "with format.class=IcebergFormat a router must send every record of a topic to one table: only RegexRouter "
        "without a predicate is supported"
    )


def route_field(config: SinkConfig) -> str | None:
    """`iceberg.tables.route-field` when `iceberg.tables.dynamic-enabled` routes records by it (else None: a route
    field without it routes statically, StaticRoutes); ConfigError naming the key when dynamic routing has none."""
    field, dynamic = config["iceberg.tables.route-field"], config["iceberg.tables.dynamic-enabled"]
    if dynamic and not field:
        raise ConfigError("iceberg.tables.route-field", "is required with iceberg.tables.dynamic-enabled=true")
    return field if dynamic else None


def table_template(config: SinkConfig) -> str | None:
    """The `iceberg.tables` entry, checked: `namespace[.namespace...].table`, `${topic}` only in the table part;
    None when records are routed: they name their tables (`route_field`: `iceberg.tables` is not read), or static
    routing picks theirs among several (StaticRoutes, which checks them)."""
    if route_field(config) or StaticRoutes.from_config(config, dynamic=False):
        return None
    tables = config["iceberg.tables"]
    if not tables:
        raise ConfigError("iceberg.tables", "is required with format.class=IcebergFormat")
    template = tables[0]
    parts = template.split(".")
    if len(parts) < 2 or not all(parts):
        raise ConfigError("iceberg.tables", f"{template!r} is not `namespace.table`")
    if any(TOPIC_PLACEHOLDER in part for part in parts[:-1]):
        raise ConfigError("iceberg.tables", f"{template!r}: `${{topic}}` may only appear in the table name")
    return template


def topic_as_name(topic: str) -> str:
    """A topic as a table name: lower case, characters other than a-z, 0-9 and _ as _ (Glue's rule)."""
    return re.sub(r"[^a-z0-9_]", "_", topic.lower())


def catalog_properties(config: SinkConfig) -> dict[str, str]:
    """pyiceberg catalog properties: every `iceberg.catalog.*` key without its prefix. The S3 endpoint and region
    of the data files default to the engine's own (`store.url`, else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, as
    boto3 reads them; `s3.region`), and so does Glue's region (boto3 reads AWS_DEFAULT_REGION, not the
    AWS_REGION the deployed job is given)."""
    properties = {
        name: value
        for name in _DECLARED_CATALOG_KEYS
        if (value := config.optional_text(CATALOG_PREFIX + name)) is not None
    }
    properties.update(
        {k[len(CATALOG_PREFIX) :]: v for k, v in config.passthrough.items() if k.startswith(CATALOG_PREFIX)}
    )
    endpoint = config["store.url"] or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        properties.setdefault("s3.endpoint", endpoint)
    properties.setdefault("s3.region", config["s3.region"])
    if config["iceberg.catalog.type"] == "glue" and "client.region" not in properties:
        properties.setdefault("glue.region", config["s3.region"])
    if config["iceberg.catalog.type"] == "rest":
        for name, value in s3_tables_defaults(properties.get("warehouse")).items():
            properties.setdefault(name, value)
    return properties


def s3_tables_defaults(warehouse: str | None) -> dict[str, str]:
    """With a table bucket's ARN as the REST catalog's warehouse, S3 Tables' catalog properties as AWS documents
    them for pyiceberg: the region's Iceberg REST endpoint, requests signed with SigV4 as `s3tables` in the bucket's
    region. Nothing for another warehouse (another REST catalog)."""
    match = S3_TABLES_BUCKET_ARN.fullmatch(warehouse or "")
    if not match:
        return {}
    region = match["region"]
    return {
        "uri": f"https://s3tables.{region}.amazonaws.com/iceberg",
        "rest.sigv4-enabled": "true",
        "rest.signing-name": "s3tables",
        "rest.signing-region": region,
    }


def check_rest_catalog(config: SinkConfig) -> None:
    """A REST catalog needs its endpoint: `iceberg.catalog.uri`, or a table bucket's ARN as the warehouse."""
    if not config["iceberg.catalog.uri"] and not s3_tables_defaults(config["iceberg.catalog.warehouse"]):
        raise ConfigError(
            "iceberg.catalog.uri",
            "is required with iceberg.catalog.type=rest unless "
            "iceberg.catalog.warehouse is an S3 table bucket's ARN "
            "(arn:aws:s3tables:<region>:<account>:bucket/<name>)",
        )


def table_properties(config: SinkConfig) -> dict[str, str]:
    """Properties of an auto-created table: every `iceberg.tables.auto-create-props.*` key without its prefix."""
    return {k[len(TABLE_PROPS_PREFIX) :]: v for k, v in config.passthrough.items() if k.startswith(TABLE_PROPS_PREFIX)}
