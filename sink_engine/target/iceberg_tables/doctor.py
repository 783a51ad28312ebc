"""IcebergFormat: the catalog the run commits to (`iceberg.catalog.*`) is reachable, its namespace exists, and each
table of the connector's topics exists or will be created by the first run (`iceberg.tables.auto-create-enabled`).
Loading a table reads its metadata file, so the table's files are reached as a commit reaches them. The Iceberg
target's check (target/iceberg_tables/target.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sink_engine.doctor.checks import Check, Failed
from sink_engine.target.iceberg_tables.settings import IcebergSettings

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

    from sink_engine.doctor.runner import Context


def tables(context: Context) -> str:
    from pyiceberg.exceptions import NoSuchNamespaceError  # pyiceberg only for IcebergFormat (`libraries` checks it)

    from sink_engine.target.iceberg_tables.catalog import open_catalog  # imports pyarrow

    settings = IcebergSettings.from_config(context.config)
    catalog = open_catalog(settings)
    if settings.static_routes is not None:
        return _loaded(catalog, settings, sorted(settings.static_routes.tables))
    if settings.namespace is None and not settings.namespaces:
        namespaces = catalog.list_namespaces()
        return (
            f"catalog {settings.catalog}: {len(namespaces)} namespace(s) listed; records name their tables "
            f"(iceberg.tables.route-field={settings.route_field})"
        )
    for namespace in settings.namespaces:
        try:
            catalog.load_namespace_properties(namespace)
        except NoSuchNamespaceError:
            key = "iceberg.tables" if settings.namespace else "iceberg.tables.route-namespaces"
            raise Failed(
                f"namespace {namespace} does not exist in catalog {settings.catalog} ({key}): "
                "`sink-engine init` or the stack creates it"
            ) from None
    if settings.namespace is None:
        return (
            f"catalog {settings.catalog}: namespaces {', '.join(settings.namespaces)} exist; records name their "
            f"tables in them (iceberg.tables.route-field={settings.route_field})"
        )
    topics = context.settings.source.topics or context.topics or ()
    return _loaded(catalog, settings, sorted({settings.table_identifier(topic) for topic in topics}))


def _loaded(catalog: Catalog, settings: IcebergSettings, identifiers: list[str]) -> str:
    """Failed naming the tables missing from the catalog unless auto-create makes them."""
    from sink_engine.target.iceberg_tables.catalog import load_table  # imports pyarrow

    absent = [identifier for identifier in identifiers if load_table(catalog, identifier) is None]
    if absent and not settings.auto_create:
        raise Failed(
            f"tables missing in catalog {settings.catalog}: {', '.join(absent)} (iceberg.tables; "
            "iceberg.tables.auto-create-enabled=false)"
        )
    found = len(identifiers) - len(absent)
    where = f"namespace {settings.namespace}" if settings.namespace else "iceberg.tables"
    return f"catalog {settings.catalog}, {where}: {found} table(s) loaded" + (
        f", {len(absent)} created by the first run: {', '.join(absent)}" if absent else ""
    )


CHECKS = (Check("iceberg catalog", tables, service="glue"),)
