"""Stateful stack: the data-lake bucket, the offsets table and the Iceberg tables' Glue databases. Deployed first; the
service stack reads it."""
from __future__ import annotations

from aws_cdk import Stack
from constructs import Construct

from infra.constructs.data_lake import DataLake
from infra.constructs.iceberg_databases import IcebergDatabases
from infra.constructs.offsets_table import OffsetsTable
from infra.settings import Settings


class DataStack(Stack):
    """Attributes: `lake` (DataLake), `offsets` (OffsetsTable) and `iceberg` (IcebergDatabases). `topics_dirs`: the
    connectors' `topics.dir`s, each archived by a lifecycle rule of the bucket; `iceberg_databases`: the Glue
    databases of the IcebergFormat connectors' tables."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, topics_dirs: tuple[str, ...] = (),
                 iceberg_databases: tuple[str, ...] = (), **kwargs):
        super().__init__(scope, id, termination_protection=settings.protect_data, **kwargs)
        self.lake = DataLake(self, "DataLake", settings=settings, topics_dirs=topics_dirs)
        self.offsets = OffsetsTable(self, "Offsets", settings=settings)
        self.iceberg = IcebergDatabases(self, "Iceberg", names=iceberg_databases, bucket_name=settings.bucket_name,
                                        env=settings.env)
