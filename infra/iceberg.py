"""IcebergFormat connectors in the stacks: the Glue tables a connector writes, where they lie in the data lake, and
what a deployed Iceberg connector may not set.

Deployed tables are in the AWS Glue Data Catalog of the environment's account and region
(`iceberg.catalog.type=glue`), in databases the data stack creates with the location
`s3://<bucket>/iceberg/<database>`. pyiceberg's Glue catalog puts a new table at `<database location>/<table>`, its
data files under `<table>/data/` and its metadata under `<table>/metadata/`; so the job role's S3 grants name
`iceberg/<database>/<table>/` and nothing else, and no lifecycle rule of the bucket covers `iceberg/` (Athena cannot
read archived objects).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from infra.errors import ConnectorSpecError
from sink_engine.iceberg.settings import CATALOG_PREFIX, TABLE_PROPS_PREFIX, table_identifier, table_template

WAREHOUSE_PREFIX = "iceberg"  # key prefix of every Iceberg table in the data lake
_GLUE_NAME = r"[a-z0-9_]{1,255}"  # a database or table name that Glue keeps as it is and Athena can query
# pyiceberg catalog properties that would send the job's requests elsewhere than the environment's own Glue and S3,
# or sign them with other credentials than the job role's (suffixes of `iceberg.catalog.<property>`)
_ELSEWHERE = ("endpoint", "access-key-id", "secret-access-key", "session-token", "profile-name", "role-arn",
              "role-session-name")
# table properties that put files outside the table's location, or make commits delete files, which the job
# role may not do (`iceberg.tables.auto-create-props.<property>`)
_OUTSIDE_LOCATION = ("write.data.path", "write.metadata.path", "write.object-storage.path",
                     "write.folder-storage.path")
_DELETES = "write.metadata.delete-after-commit.enabled"


@dataclass(frozen=True)
class IcebergTables:
    """The Glue tables one Iceberg connector writes: `tables` (one per topic with `${topic}`, else one), all in
    `database`; `auto_create` when the job may create them."""

    database: str
    tables: tuple[str, ...]
    auto_create: bool

    def table_prefix(self, table: str) -> str:
        """The key prefix of `table`'s data and metadata files in the data lake (its location, with a slash)."""
        return f"{WAREHOUSE_PREFIX}/{self.database}/{table}/"


def database_location(bucket_name: str, database: str) -> str:
    """The LocationUri the stack gives an Iceberg connector's Glue database."""
    return f"s3://{bucket_name}/{WAREHOUSE_PREFIX}/{database}"


def iceberg_tables(config, topics: tuple[str, ...]) -> IcebergTables | None:
    """The tables of a parsed connector config reading `topics`; None when its format is not IcebergFormat."""
    if config["format.class"] != "iceberg":
        return None
    identifiers = sorted({table_identifier(config, topic) for topic in topics})
    database = table_template(config).split(".")[0]
    return IcebergTables(database, tuple(i.split(".", 1)[1] for i in identifiers),
                         bool(config["iceberg.tables.auto-create-enabled"]))


def check_deployable(source: str, config, topics: tuple[str, ...], *, account: str, region: str,
                     reserved_database: str) -> None:
    """Refuse, naming file and key, what the stacks cannot deploy for an IcebergFormat connector: a catalog other
    than Glue (the engine runs `rest`, but the stacks neither grant nor create S3 Tables yet), a table that is not
    `database.table` with Glue names, the database of the environment's Athena tables (`reserved_database`: the
    service stack owns it), a warehouse (the stack sets the database's location), catalog properties that point
    elsewhere, table properties that put files outside the table's location or delete files."""
    if config["iceberg.catalog.type"] == "rest":
        raise ConnectorSpecError(source, "iceberg.catalog.type", "rest (an Iceberg REST catalog such as S3 Tables') "
                                 "is supported by the engine but not yet by the stacks, which grant and create Glue "
                                 "databases only; deployed connectors use glue (the AWS Glue Data Catalog)")
    if config["iceberg.catalog.type"] != "glue":
        raise ConnectorSpecError(source, "iceberg.catalog.type", f"{config['iceberg.catalog.type']!r} cannot be "
                                 "deployed: a SQL catalog's SQLite file serves the processes of one machine; deployed "
                                 "connectors use glue (the AWS Glue Data Catalog)")
    template = table_template(config)
    if template.count(".") != 1:
        raise ConnectorSpecError(source, "iceberg.tables", f"{template!r}: a Glue table is `database.table` (Glue "
                                 "has one level of namespaces)")
    tables = iceberg_tables(config, topics)
    for name in (tables.database, *tables.tables):
        if not re.fullmatch(_GLUE_NAME, name):
            raise ConnectorSpecError(source, "iceberg.tables", f"{name!r} is not a Glue name Athena can query: use "
                                     "lower-case letters, digits and _")
    if tables.database == reserved_database:
        raise ConnectorSpecError(source, "iceberg.tables", f"database {tables.database!r} is the environment's "
                                 "catalog.database, whose Athena tables the service stack owns; name another one")
    if config["iceberg.catalog.warehouse"]:
        raise ConnectorSpecError(source, "iceberg.catalog.warehouse", "must be unset on AWS: a table lies under "
                                 "its Glue database's location, which the stack sets "
                                 f"(s3://<bucket_name>/{WAREHOUSE_PREFIX}/<database>)")
    properties = {k[len(CATALOG_PREFIX):]: v for k, v in config.passthrough.items() if k.startswith(CATALOG_PREFIX)}
    for name, value in sorted(properties.items()):
        if name.rsplit(".", 1)[-1] in _ELSEWHERE:
            raise ConnectorSpecError(source, CATALOG_PREFIX + name, "must be unset on AWS: the job reaches the "
                                     "environment's Glue and S3 with its own role")
        if name == "glue.id" and value != account:
            raise ConnectorSpecError(source, CATALOG_PREFIX + name, f"is {value!r}; the stack creates the database "
                                     f"and grants the tables in this environment's account {account}")
        if name in ("glue.region", "client.region", "s3.region") and value != region:
            raise ConnectorSpecError(source, CATALOG_PREFIX + name, f"is {value!r}; this environment deploys "
                                     f"{region!r}")
    table_properties = {k[len(TABLE_PROPS_PREFIX):]: v for k, v in config.passthrough.items()
                        if k.startswith(TABLE_PROPS_PREFIX)}
    for name, value in sorted(table_properties.items()):
        if name in _OUTSIDE_LOCATION:
            raise ConnectorSpecError(source, TABLE_PROPS_PREFIX + name, "must be unset on AWS: the job role may "
                                     "write under the table's location only")
        if name == _DELETES and str(value).lower() == "true":
            raise ConnectorSpecError(source, TABLE_PROPS_PREFIX + name, "cannot be true on AWS: the job role may not "
                                     "delete objects (old metadata files are kept)")
