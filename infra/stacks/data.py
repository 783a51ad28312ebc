"""Stateful stack: the data-lake bucket, the offsets table, the Iceberg tables' Glue databases and the S3 table
bucket with its namespaces. Deployed first; the service stack reads it."""

from __future__ import annotations

from aws_cdk import Stack
from constructs import Construct

from infra.constructs.data_lake import DataLake
from infra.constructs.iceberg_databases import IcebergDatabases
from infra.constructs.offsets_table import OffsetsTable
from infra.constructs.s3_tables import S3Tables
from infra.settings import Settings


class DataStack(Stack):
    """Attributes: `lake` (DataLake), `offsets` (OffsetsTable), `iceberg` (IcebergDatabases) and `s3_tables`
    (S3Tables, or None when the settings name no `iceberg.table_bucket`). `topics_dirs`: the connectors'
    `topics.dir`s, each archived by a lifecycle rule of the bucket; `iceberg_databases`: the Glue databases of the
    IcebergFormat connectors' tables; `s3_tables_namespaces`: the namespaces of the S3 Tables connectors'."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        topics_dirs: tuple[str, ...] = (),
        iceberg_databases: tuple[str, ...] = (),
        s3_tables_namespaces: tuple[str, ...] = (),
        **kwargs,
    ):
        super().__init__(scope, id, termination_protection=settings.protect_data, **kwargs)
        self.lake = DataLake(self, "DataLake", settings=settings, topics_dirs=topics_dirs)
        self.offsets = OffsetsTable(self, "Offsets", settings=settings)
        self.iceberg = IcebergDatabases(
            self, "Iceberg", names=iceberg_databases, bucket_name=settings.bucket_name, env=settings.env
        )
        bucket = settings.iceberg.table_bucket
        self.s3_tables = (
            S3Tables(self, "S3Tables", bucket_name=bucket, namespaces=s3_tables_namespaces) if bucket else None
        )
