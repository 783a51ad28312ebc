"""Reading what landed in a table, as its readers would: pyiceberg scans to Arrow."""

from __future__ import annotations

from sink_engine.target.iceberg_tables.catalog import ensure_namespace, load_table, open_catalog
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.target.iceberg_tables.snapshots import CONNECTOR, newest_of_connector, snapshot_offsets

# The tables a test loaded, (catalog, identifier) -> the config that reaches it, while every_table.py records them.
LOADED: dict[tuple[str, str], object] | None = None


def catalog_of(config):
    """The connector's catalog, opened as a run opens it."""
    return open_catalog(IcebergSettings.from_config(config))


def table_name(config, topic: str | None = None) -> str:
    """The connector's table for `topic` (its first topic by default)."""
    return IcebergSettings.from_config(config).table_identifier(topic or config["topics"][0])


def create_namespace(config, topic: str | None = None) -> None:
    """The namespace of the connector's table for `topic`, as `sink-engine init` creates it."""
    ensure_namespace(catalog_of(config), table_name(config, topic))


def table_of(config, topic: str | None = None):
    """The connector's table for `topic` (its first topic by default), freshly loaded; None when missing."""
    table = load_table(catalog_of(config), table_name(config, topic))
    if LOADED is not None and table is not None:
        LOADED[
            (str(sorted(IcebergSettings.from_config(config).catalog_properties.items())), table_name(config, topic))
        ] = config
    return table


def rows(config, topic: str | None = None, row_filter: str = "True") -> list[dict]:
    table = table_of(config, topic)
    return table.scan(row_filter=row_filter).to_arrow().to_pylist() if table else []


def ids(config, column: str = "event_id", topic: str | None = None) -> list:
    """The column's values over every row, sorted (so that duplicates show)."""
    return sorted(row[column] for row in rows(config, topic))


def connector_snapshots(config, topic: str | None = None) -> list:
    """The connector's snapshots, oldest first."""
    table = table_of(config, topic)
    return (
        sorted(
            (s for s in table.metadata.snapshots if s.summary.get(CONNECTOR) == config.name),
            key=lambda s: s.sequence_number,
        )
        if table
        else []
    )


def newest_offsets(config, topic: str | None = None) -> dict[int, int]:
    """Partition -> next offset, as the connector's newest snapshot of the table holds them."""
    snapshot = newest_of_connector(table_of(config, topic), config.name)
    return {e["partition"]: e["next"] for e in snapshot_offsets(snapshot)} if snapshot else {}


def table_view(config, identifier: str):
    """The config of a connector that routes records (by a field, `iceberg.tables.dynamic-enabled`, or statically,
    `iceberg.table.<table>.route-regex`) as if it wrote `identifier` alone (same name, catalog and keys), for reading
    one of its tables with the helpers here."""
    from sink_engine.config import parse_config
    from tests.dlq_corpus import raw_config

    raw = {
        k: v
        for k, v in raw_config(config).items()
        if k != "iceberg.tables.route-field" and not k.endswith(".route-regex")
    }
    raw.update({"iceberg.tables": identifier, "iceberg.tables.dynamic-enabled": False})
    return parse_config({"name": config.name, "config": raw})
