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
_NAMESPACE = {"glue": "database", "rest": "namespace"}  # what the first part of `iceberg.tables` names, per catalog


@dataclass(frozen=True)
class IcebergTables:
    """The tables one Iceberg connector writes: `tables` (one per topic with `${topic}`, else one), all in
    `database` (a Glue database, or with `table_bucket_arn` a namespace of that S3 table bucket); `auto_create`
    when the job may create them."""

    database: str
    tables: tuple[str, ...]
    auto_create: bool
    table_bucket_arn: str | None = None  # S3 Tables (`iceberg.catalog.type=rest`); None: the Glue Data Catalog

    def table_prefix(self, table: str) -> str:
        """The key prefix of `table`'s data and metadata files in the data lake (its location, with a slash)."""
        return f"{WAREHOUSE_PREFIX}/{self.database}/{table}/"


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
    identifiers = sorted({iceberg.table_identifier(topic) for topic in topics})
    assert iceberg.table_template is not None  # fan-out by field is refused (check_deployable)
    database = iceberg.table_template.split(".")[0]
    return IcebergTables(
        database,
        tuple(i.split(".", 1)[1] for i in identifiers),
        bool(iceberg.auto_create),
        catalog.warehouse if catalog.type == "rest" else None,
    )


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
    properties that put files outside the table's location or delete files."""
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
    if template is None and iceberg.static_routes is not None:
        raise ConnectorSpecError(
            source,
            "iceberg.tables",
            "several tables (static routing) cannot be deployed yet: the job role is granted one table's database or "
            "namespace; run it with `sink-engine run` where its role may write each listed table",
        )
    if template is None:
        raise ConnectorSpecError(
            source,
            "iceberg.tables.dynamic-enabled",
            "fan-out by field cannot be deployed yet: the job role is granted the tables `iceberg.tables` names, and "
            "records name theirs only at run time",
        )
    if template.count(".") != 1:
        raise ConnectorSpecError(
            source,
            "iceberg.tables",
            f"{template!r}: {where} is `{_NAMESPACE[catalog]}.table` (one level of namespaces)",
        )
    tables = iceberg_tables(config, topics)
    assert tables is not None  # an IcebergFormat config (IcebergSettings read it)
    for name in (tables.database, *tables.tables):
        if not re.fullmatch(_GLUE_NAME, name):
            raise ConnectorSpecError(
                source,
                "iceberg.tables",
                f"{name!r} is not a Glue name Athena can query: use lower-case letters, digits and _",
            )
    if catalog == "glue" and tables.database == reserved_database:
        raise ConnectorSpecError(
            source,
            "iceberg.tables",
            f"database {tables.database!r} is the environment's "
            "catalog.database, whose Athena tables the service stack owns; name another one",
        )
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
