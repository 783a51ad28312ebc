"""The S3 table bucket of the S3 Tables connectors (`iceberg.catalog.type=rest`) and its namespaces, in the stateful
stack."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_s3tables as s3tables
from constructs import Construct


class S3Tables(Construct):
    """Attributes: `bucket` (the CfnTableBucket named `bucket_name`) and `namespaces` (name -> CfnNamespace), one
    per name in `namespaces`. All retained when the stack is deleted or a name is dropped: the tables in them are
    the data, created by the job."""

    def __init__(self, scope: Construct, id: str, *, bucket_name: str, namespaces: tuple[str, ...]):
        super().__init__(scope, id)
        self.bucket = s3tables.CfnTableBucket(self, "TableBucket", table_bucket_name=bucket_name)
        self.bucket.apply_removal_policy(RemovalPolicy.RETAIN)
        self.namespaces: dict[str, s3tables.CfnNamespace] = {}
        for name in namespaces:
            namespace = s3tables.CfnNamespace(
                self, f"Namespace-{name}", namespace=name, table_bucket_arn=self.bucket.attr_table_bucket_arn
            )
            namespace.apply_removal_policy(RemovalPolicy.RETAIN)
            self.namespaces[name] = namespace
