"""Stateful stack: the data-lake bucket and the offsets table. Deployed first; the service stack reads it."""
from __future__ import annotations

from aws_cdk import Stack
from constructs import Construct

from infra.constructs.data_lake import DataLake
from infra.constructs.offsets_table import OffsetsTable
from infra.settings import Settings


class DataStack(Stack):
    """Attributes: `lake` (DataLake) and `offsets` (OffsetsTable). `topics_dirs`: the connectors' `topics.dir`s,
    each archived by a lifecycle rule of the bucket."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, topics_dirs: tuple[str, ...] = (), **kwargs):
        super().__init__(scope, id, termination_protection=settings.protect_data, **kwargs)
        self.lake = DataLake(self, "DataLake", settings=settings, topics_dirs=topics_dirs)
        self.offsets = OffsetsTable(self, "Offsets", settings=settings)
