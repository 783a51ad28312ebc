"""An IcebergFormat connector deployed in the IAM-enforcing moto: its Glue database created as the data stack declares
it, its config published as the admin publishes it, its job role made from the template (tests/iam/
test_tables_under_iam.py, test_tables_continuous_under_iam.py); and pyiceberg's Glue catalog as the admin, to read
its tables back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.iam.deployment import Deployed, Synthesized
from tests.iam.intrinsics import resolve
from tests.iam.template import connector_role, custom_resource_property
from tests.iam.world import IamWorld, Principal


@dataclass(frozen=True)
class IcebergDeployment:
    deployed: Deployed
    principal: Principal
    config_uri: str


@contextmanager
def iceberg_deployment(world: IamWorld, synthesized: Synthesized) -> Iterator[IcebergDeployment]:
    """The connector of `synthesized` deployed next to the suite's one: its Glue databases, its published config, its
    job role. Its config is removed afterwards, so that the admin's drift check (test_lambdas_under_iam.py) finds
    only what the suite's deployment publishes."""
    from infra.constructs.admin import RESOURCE_TYPE
    from lambdas.admin.desired import DesiredState

    mine = Deployed.of(synthesized, {})
    for resource in synthesized.templates["data"]["Resources"].values():
        if resource["Type"] == "AWS::Glue::Database":
            world.admin.client("glue").create_database(
                DatabaseInput=resolve(resource["Properties"]["DatabaseInput"], mine.physical["data"])
            )
    state = mine.in_moto(
        custom_resource_property(synthesized.templates["service"], RESOURCE_TYPE, "State", mine.physical["service"])
    )
    desired = DesiredState.from_json(state)  # the property is the JSON text the admin reads
    (connector,) = desired.connectors
    s3 = world.admin.client("s3")
    s3.put_object(
        Bucket=desired.bucket, Key=connector.config_key, Body=desired.published_objects()[connector.config_key]
    )
    role_id = connector_role(synthesized.templates["service"], synthesized.connector)
    principal = world.role(mine.role_name(role_id), mine.documents(role_id))
    try:
        yield IcebergDeployment(mine, principal, f"s3://{desired.bucket}/{connector.config_key}")
    finally:
        s3.delete_object(Bucket=desired.bucket, Key=connector.config_key)


def admin_catalog(world: IamWorld):
    """pyiceberg's Glue catalog as the admin, to read the tables back."""
    from pyiceberg.catalog import load_catalog

    admin, region = world.admin, world.region
    return load_catalog(
        "admin",
        **{
            "type": "glue",
            "glue.endpoint": world.endpoint,
            "glue.region": region,
            "glue.access-key-id": admin.access_key_id,
            "glue.secret-access-key": admin.secret_access_key,
            "s3.endpoint": world.endpoint,
            "s3.region": region,
            "s3.access-key-id": admin.access_key_id,
            "s3.secret-access-key": admin.secret_access_key,
        },
    )
