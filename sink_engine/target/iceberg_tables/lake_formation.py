"""IcebergFormat on the Glue Data Catalog: whether Lake Formation leaves the connector's database and tables to IAM.

The job role reaches its Glue database and tables with IAM grants alone (infra/job_policy.py), which works only while
Lake Formation keeps "Use only IAM access control": Lake Formation's initial settings grant `IAMAllowedPrincipals`
every permission on existing Data Catalog resources and make new ones the same ("Changing the default settings for
your data lake", Lake Formation Developer Guide,
https://docs.aws.amazon.com/lake-formation/latest/dg/change-settings.html). GetDataLakeSettings answers the
account's defaults: in `CreateDatabaseDefaultPermissions` and `CreateTableDefaultPermissions`, ALL granted to
IAM_ALLOWED_PRINCIPALS means IAM access control, an empty list Lake Formation's ("DataLakeSettings", Lake Formation
API Reference, https://docs.aws.amazon.com/lake-formation/latest/APIReference/API_DataLakeSettings.html). A Glue
database carries its own `CreateTableDefaultPermissions`, which the tables created in it (the first run's, with
auto-create) take ("Database", AWS Glue API). Any of them without IAM_ALLOWED_PRINCIPALS fails the check, naming
the grants the job role then needs (infra/README.md, "Lake Formation"): the doctor cannot read the role's Lake
Formation permissions themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import ClientError

from sink_engine.aws import region
from sink_engine.config import SinkConfig
from sink_engine.doctor import grants
from sink_engine.doctor.checks import Check, Failed
from sink_engine.target.iceberg_tables.settings import IcebergSettings, catalog_properties

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context

IAM_ONLY = {"Principal": {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}, "Permissions": ["ALL"]}


def iam_only(permissions: list | None) -> bool:
    """Whether default permissions (a PrincipalPermissions list) are "Use only IAM access control"."""
    return any(
        p.get("Principal") == IAM_ONLY["Principal"] and "ALL" in p.get("Permissions", []) for p in permissions or []
    )


def governed(account: dict, *databases: dict) -> list[str]:
    """What Lake Formation governs of the account's defaults (GetDataLakeSettings' DataLakeSettings) and the
    connector's databases (GetDatabase's Database), each named by its setting."""
    found = [
        f"the account's {name} (new {what})"
        for name, what in (
            ("CreateDatabaseDefaultPermissions", "databases"),
            ("CreateTableDefaultPermissions", "tables"),
        )
        if not iam_only(account.get(name))
    ]
    return found + [
        f"database {database['Name']}'s CreateTableDefaultPermissions (its new tables)"
        for database in databases
        if not iam_only(database.get("CreateTableDefaultPermissions"))
    ]


def lake_formation(context: Context) -> str:
    settings = IcebergSettings.from_config(context.config)
    where = settings.catalog_properties.get("glue.region") or region(context.settings.run.region)
    account = boto3.client("lakeformation", region_name=where).get_data_lake_settings()["DataLakeSettings"]
    glue = boto3.client("glue", region_name=where)
    try:  # a fan-out that declares no namespace has none to read: the account's defaults alone
        databases = [glue.get_database(Name=name)["Database"] for name in settings.namespaces]
    except ClientError as e:  # named as Glue's call, not Lake Formation's (the check's service)
        raise Failed(grants.describe(e, "glue")) from None
    found, names = governed(account, *databases), ", ".join(settings.namespaces) or "(none declared)"
    if not found:
        return (
            f"IAM access control only (IAM_ALLOWED_PRINCIPALS: ALL) for new databases and tables, and for new "
            f"tables of database {names}"
        )
    raise Failed(
        f"Lake Formation governs {'; '.join(found)}: the job role's IAM grants are not enough. Grant it, in "
        f"Lake Formation, DESCRIBE (and CREATE_TABLE with auto-create) on database {names}, "
        "SELECT, INSERT, ALTER and DESCRIBE on its tables, and DATA_LOCATION_ACCESS on their location if it "
        'is registered; or give IAM_ALLOWED_PRINCIPALS ALL on them (infra/README.md, "Lake Formation")'
    )


def _on_glue(config: SinkConfig) -> bool:
    """An Iceberg connector's catalog is Glue (the Iceberg target's checks hold this one): `iceberg.catalog.type`,
    the `type` of its catalog properties."""
    return catalog_properties(config).get("type") == "glue"


CHECKS = (Check("lake formation", lake_formation, service="lakeformation", applies=_on_glue),)
