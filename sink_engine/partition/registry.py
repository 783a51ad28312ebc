"""Partitioner by its canonical config name (see config.keys.PARTITIONER_CLASSES)."""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.partition.base import Partitioner
from sink_engine.partition.default import DefaultPartitioner


def partitioner_for(config: SinkConfig) -> Partitioner:
    return {"default": DefaultPartitioner}[config["partitioner.class"]]()
