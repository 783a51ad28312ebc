"""Partitioners: the encoded partition (key path segment) of each record."""

from sink_engine.partition.base import Partitioner
from sink_engine.partition.registry import partitioner_for
from sink_engine.partition.settings import PartitionSettings

__all__ = ["PartitionSettings", "Partitioner", "partitioner_for"]
