"""IcebergFormat connectors in the stacks: the tables a connector writes, where they lie, and what a deployed
Iceberg connector may not set.

With `iceberg.catalog.type=glue` the tables are in the AWS Glue Data Catalog of the environment's account and
region, in databases the data stack creates with the location `s3://<bucket>/iceberg/<database>`. pyiceberg's Glue
catalog puts a new table at `<database location>/<table>`, its data files under `<table>/data/` and its metadata
under `<table>/metadata/`; so the job role's S3 grants name `iceberg/<database>/<table>/` and nothing else, and no
lifecycle rule of the bucket covers `iceberg/` (Athena cannot read archived objects).

With `iceberg.catalog.type=rest` the tables are S3 Tables': in the table bucket the data stack creates
(`iceberg.table_bucket` in the environment's settings), whose ARN the connector names as its
`iceberg.catalog.warehouse`, in namespaces the data stack creates; the engine reaches it at S3 Tables' regional
Iceberg REST endpoint, signed with the job role, and S3 Tables keeps the files.

A fan-out connector (`iceberg.tables.dynamic-enabled`) names no table before its records do: it declares the
namespaces they may reach (`iceberg.tables.route-namespaces`, `iceberg.tables.default-namespace`), the data stack
creates each as a Glue database or S3 Tables namespace, and the job role is granted any table of those, and of no
other (the engine refuses a record routed elsewhere as a bad record before it reaches AWS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infra.errors import ConnectorSpecError
from sink_engine.format.settings import FormatSettings
from sink_engine.target.iceberg_tables.settings import CATALOG_PREFIX, TABLE_PROPS_PREFIX, CatalogKeys, IcebergSettings

WAREHOUSE_PREFIX = "iceberg"  # key prefix of every Iceberg table in the data lake
_GLUE_NAME = r"[a-z0-9_]{1,255}"  # a database or table name that Glue keeps as it is and Athena can query
# pyiceberg catalog properties that would send the job's requests elsewhere than the environment's own Glue and S3,
# or sign them with other credentials than the job role's (suffixes of `iceberg.catalog.<property>`)
_ELSEWHERE = (
    "endpoint",
    "access-key-id",
    "secret-access-key",
    "session-token",
    "profile-name",
    "role-arn",
    "role-session-name",
)
# table properties that put files outside the table's location, or make commits delete files, which the job
# role may not do (a continuous connector's may delete its spent staged files, nothing else)
# (`iceberg.tables.auto-create-props.<property>`)
_OUTSIDE_LOCATION = ("write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path")
_DELETES = "write.metadata.delete-after-commit.enabled"
DEFAULT_KEY, DECLARED_KEY = "iceberg.tables.default-namespace", "iceberg.tables.route-namespaces"  # fan-out's
_NAMESPACE = {"glue": "database", "rest": "namespace"}  # what the first part of `iceberg.tables` names, per catalog


ANY_TABLE = "*"  # the table of a fan-out connector's pair: any table of the database, named by records at run time


@dataclass(frozen=True)
class IcebergTables:
    """The tables one Iceberg connector writes, as (database, table) pairs: one per topic with `${topic}`, each of
    `iceberg.tables` with static routing, else one; with fan-out by field, (database, ANY_TABLE) for each namespace
    it declares. A database is a Glue database, or with `table_bucket_arn` a namespace of that S3 table bucket;
    `auto_create` when the job may create tables."""

    tables: tuple[tuple[str, str], ...]
    auto_create: bool
    table_bucket_arn: str | None = None  # S3 Tables (`iceberg.catalog.type=rest`); None: the Glue Data Catalog

    @property
    def databases(self) -> tuple[str, ...]:
        """The databases (namespaces) of its tables, sorted."""
        return tuple(sorted({database for database, _ in self.tables}))

    @staticmethod
    def table_prefix(database: str, table: str) -> str:
        """The key prefix of a table's data and metadata files in the data lake (its location, with a slash); with
        ANY_TABLE, a pattern of any table's of the database."""
        return f"{WAREHOUSE_PREFIX}/{database}/{table}/"


def table_bucket_arn(region: str, account: str, name: str) -> str:
    """The ARN of the S3 table bucket `name` (the warehouse an S3 Tables connector names)."""
    return f"arn:aws:s3tables:{region}:{account}:bucket/{name}"


def database_location(bucket_name: str, database: str) -> str:
    """The LocationUri the stack gives an Iceberg connector's Glue database."""
    return f"s3://{bucket_name}/{WAREHOUSE_PREFIX}/{database}"


def iceberg_tables(config, topics: tuple[str, ...]) -> IcebergTables | None:
    """The tables of a parsed connector config reading `topics`; None when its format is not IcebergFormat."""
    if FormatSettings.from_config(config).format_class != "iceberg":
        return None
    iceberg, catalog = IcebergSettings.from_config(config), CatalogKeys.from_config(config)
    if iceberg.route_field is not None:  # fan-out by field: any table of the namespaces it declares
        pairs = [(namespace, ANY_TABLE) for namespace in iceberg.route_namespaces.declared]
    elif iceberg.static_routes is not None:  # static routing: the tables `iceberg.tables` lists
        pairs = [_pair(table) for table in iceberg.static_routes.tables]
    else:
        pairs = [_pair(iceberg.table_identifier(topic)) for topic in topics]
    return IcebergTables(
        tuple(sorted(set(pairs))), bool(iceberg.auto_create), catalog.warehouse if catalog.type == "rest" else None
    )


def _pair(identifier: str) -> tuple[str, str]:
    database, table = identifier.split(".", 1)
    return database, table


def check_deployable(
    source: str,
    config,
    topics: tuple[str, ...],
    *,
    account: str,
    region: str,
    reserved_database: str,
    stack_table_bucket_arn: str | None,
) -> None:
    """Refuse, naming file and key, what the stacks cannot deploy for an IcebergFormat connector: a SQL catalog; a
    REST catalog other than the stack's S3 table bucket (`stack_table_bucket_arn`, None when the environment has
    none) at S3 Tables' own endpoint; a table that is not `namespace.table` with names Glue and S3 Tables keep;
    with Glue, the database of the environment's Athena tables (`reserved_database`: the service stack owns it) and
    a warehouse (the stack sets the database's location); catalog properties that point elsewhere, table
    properties that put files outside the table's location or delete files; fan-out by field without declared
    namespaces (`iceberg.tables.route-namespaces`, `.default-namespace`: the job role is
    granted those alone) or with a nested one."""
    keys = CatalogKeys.from_config(config)
    catalog = keys.type
    if catalog == "rest":
        _check_stack_table_bucket(source, keys, stack_table_bucket_arn)
    elif catalog != "glue":
        raise ConnectorSpecError(
            source,
            "iceberg.catalog.type",
            f"{catalog!r} cannot be deployed: a SQL catalog's "
            "SQLite file serves the processes of one machine; deployed connectors use glue (the "
            "AWS Glue Data Catalog) or rest (the stack's S3 table bucket)",
        )
    assert catalog is not None  # glue or rest: any other was refused above
    where = "a Glue table" if catalog == "glue" else "an S3 table"
    iceberg = IcebergSettings.from_config(config)
    template = iceberg.table_template
    listed = iceberg.static_routes.tables if iceberg.static_routes else (template,) if template else ()
    for table in listed:
        if table.count(".") != 1:
            raise ConnectorSpecError(
                source,
                "iceberg.tables",
                f"{table!r}: {where} is `{_NAMESPACE[catalog]}.table` (one level of namespaces)",
            )
    if iceberg.route_field is not None:
        _check_fan_out(source, iceberg, where, catalog)
    tables = iceberg_tables(config, topics)
    assert tables is not None  # an IcebergFormat config (IcebergSettings read it)
    _check_names(source, tables, iceberg, reserved_database if catalog == "glue" else None)
    if catalog == "glue" and keys.warehouse:
        raise ConnectorSpecError(
            source,
            "iceberg.catalog.warehouse",
            "must be unset on AWS: a table lies under "
            "its Glue database's location, which the stack sets "
            f"(s3://<bucket_name>/{WAREHOUSE_PREFIX}/<database>)",
        )
    properties = {k[len(CATALOG_PREFIX) :]: v for k, v in config.passthrough.items() if k.startswith(CATALOG_PREFIX)}
    for name, value in sorted(properties.items()):
        if catalog == "rest" and name.startswith("rest."):
            raise ConnectorSpecError(
                source,
                CATALOG_PREFIX + name,
                "must be unset on AWS: the job signs its "
                "requests to S3 Tables as the table bucket's ARN makes the engine sign them "
                "(SigV4, s3tables, the bucket's region)",
            )
        if name.rsplit(".", 1)[-1] in _ELSEWHERE:
            raise ConnectorSpecError(
                source,
                CATALOG_PREFIX + name,
                "must be unset on AWS: the job reaches the environment's catalog and S3 with its own role",
            )
        if name == "glue.id" and value != account:
            raise ConnectorSpecError(
                source,
                CATALOG_PREFIX + name,
                f"is {value!r}; the stack creates the database "
                f"and grants the tables in this environment's account {account}",
            )
        if name in ("glue.region", "client.region", "s3.region") and value != region:
            raise ConnectorSpecError(
                source, CATALOG_PREFIX + name, f"is {value!r}; this environment deploys {region!r}"
            )
    for name, value in sorted(iceberg.table_properties.items()):
        if name in _OUTSIDE_LOCATION:
            raise ConnectorSpecError(
                source,
                TABLE_PROPS_PREFIX + name,
                "must be unset on AWS: the job role may write under the table's location only",
            )
        if name == _DELETES and str(value).lower() == "true":
            raise ConnectorSpecError(
                source,
                TABLE_PROPS_PREFIX + name,
                "cannot be true on AWS: the job role may not delete table files (old metadata files are kept; "
                "a continuous connector's may delete its spent staged files only)",
            )


def _check_names(source: str, tables: IcebergTables, iceberg: IcebergSettings, reserved_database: str | None) -> None:
    """Names Glue and S3 Tables keep and Athena can query; no table in the database of the environment's Athena
    tables (`reserved_database`, with Glue: the service stack owns it). Named by the key that gives the name."""

    def key(database: str) -> str:
        if iceberg.route_field is None:
            return "iceberg.tables"
        return DEFAULT_KEY if database == iceberg.route_namespaces.default else DECLARED_KEY

    for database, table in tables.tables:
        for name in (database, table) if table != ANY_TABLE else (database,):
            if not re.fullmatch(_GLUE_NAME, name):
                raise ConnectorSpecError(
                    source,
                    key(database),
                    f"{name!r} is not a Glue name Athena can query: use lower-case letters, digits and _",
                )
        if database == reserved_database:
            raise ConnectorSpecError(
                source,
                key(database),
                f"database {database!r} is the environment's catalog.database, whose Athena tables the service stack "
                "owns; name another one",
            )


def _check_fan_out(source: str, iceberg: IcebergSettings, where: str, catalog: str) -> None:
    """A deployed fan-out connector declares the namespaces its records may reach (the job role is granted them and
    no other; a record naming a table elsewhere is a bad record), each one level deep."""
    declared = iceberg.route_namespaces.declared
    if not declared:
        raise ConnectorSpecError(
            source,
            DECLARED_KEY,
            "fan-out by field is deployed with the namespaces its records may reach declared: the job role is "
            f"granted those {_NAMESPACE[catalog]}s alone (set {DECLARED_KEY}, and "
            f"{DEFAULT_KEY} for bare table names such as Debezium's __source_table)",
        )
    for namespace in declared:
        if "." in namespace:
            key = DEFAULT_KEY if namespace == iceberg.route_namespaces.default else DECLARED_KEY
            raise ConnectorSpecError(
                source, key, f"{namespace!r}: {where} is in a {_NAMESPACE[catalog]} (one level of namespaces)"
            )


def _check_stack_table_bucket(source: str, keys: CatalogKeys, stack_table_bucket_arn: str | None) -> None:
    """A deployed REST catalog is the stack's S3 table bucket, named by ARN as the warehouse, at S3 Tables' endpoint
    (which the engine derives from the ARN)."""
    warehouse = keys.warehouse
    if stack_table_bucket_arn is None:
        raise ConnectorSpecError(
            source,
            "iceberg.catalog.type",
            "rest deploys to the environment's S3 table "
            "bucket, and this environment has none: set iceberg.table_bucket in its settings "
            "(the data stack creates it) and name its ARN as iceberg.catalog.warehouse",
        )
    if warehouse != stack_table_bucket_arn:
        raise ConnectorSpecError(
            source,
            "iceberg.catalog.warehouse",
            f"is {warehouse!r}; a deployed rest catalog "
            f"is the stack's S3 table bucket {stack_table_bucket_arn!r} (iceberg.table_bucket), "
            "whose tables the job role is granted",
        )
    if keys.uri:
        raise ConnectorSpecError(
            source,
            "iceberg.catalog.uri",
            "must be unset on AWS: the stack's table bucket is "
            "reached at S3 Tables' regional endpoint, which its ARN gives",
        )
