"""The connector's partitioner as the table's partition spec, and the Kafka metadata columns of its rows.

Pure (no pyiceberg import): config checks use it."""
from __future__ import annotations

from sink_engine.errors import ConfigError
from sink_engine.iceberg.settings import METADATA_COLUMNS


def partition_fields(config) -> list[tuple[str, str, str]]:
    """[(source column, transform, partition field name)] of an auto-created table."""
    if config["partitioner.class"] == "default":
        return []
    raise ConfigError("partitioner.class", f"{config['partitioner.class']} with IcebergFormat is not built yet")


def metadata_columns(config) -> tuple[str, ...]:
    """The Kafka metadata columns of each row."""
    return METADATA_COLUMNS if config["iceberg.tables.kafka-metadata-enabled"] else ()
