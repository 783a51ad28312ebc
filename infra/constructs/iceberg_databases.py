"""The Glue databases of the IcebergFormat connectors' tables, in the stateful stack."""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_glue as glue
from constructs import Construct

from infra.iceberg import database_location


class IcebergDatabases(Construct):
    """Attribute: `databases` (name -> CfnDatabase). One database per name in `names`, located at
    `s3://<bucket>/iceberg/<name>` (where pyiceberg puts each new table, at `<location>/<table>`). Retained when
    the stack is deleted or a name is dropped: deleting a Glue database deletes its tables, which the job created
    and whose current metadata only Glue points at."""

    def __init__(self, scope: Construct, id: str, *, names: tuple[str, ...], bucket_name: str, env: str):
        super().__init__(scope, id)
        account = Stack.of(self).account
        self.databases: dict[str, glue.CfnDatabase] = {}
        for name in names:
            database = glue.CfnDatabase(
                self,
                f"Database-{name}",
                catalog_id=account,
                database_input=glue.CfnDatabase.DatabaseInputProperty(
                    name=name,
                    location_uri=database_location(bucket_name, name),
                    description=f"Iceberg tables of the sink ({env})",
                ),
            )
            database.apply_removal_policy(RemovalPolicy.RETAIN)
            self.databases[name] = database
