"""`sink-engine iceberg maintain`: rewrite small data files and expire old snapshots of the connector's tables.

Imports of pyiceberg wait for the command, so that the CLI starts without them."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from datetime import timedelta
from typing import TYPE_CHECKING

from sink_engine.cli_options import add_config_options
from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.source.metadata import partition_watermarks
from sink_engine.source.msk_brokers import kafka_client, with_cluster_brokers
from sink_engine.source.settings import SourceSettings
from sink_engine.target.choice import target_for
from sink_engine.target.iceberg_tables.errors import TableError
from sink_engine.target.iceberg_tables.settings import IcebergSettings

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

HELP = (
    "rewrite each partition's small data files as target-size files and expire old snapshots of the connector's "
    "tables, safely while runs commit; prints what was done per table as JSON lines"
)
ATTEMPTS = 5


def add_parser(commands: argparse._SubParsersAction) -> None:
    iceberg = commands.add_parser("iceberg", help="Iceberg table tools", description="Iceberg table tools")
    actions = iceberg.add_subparsers(dest="iceberg_command", required=True)
    maintain = actions.add_parser("maintain", help=HELP, description=HELP)
    add_config_options(maintain)
    maintain.add_argument(
        "--table",
        action="append",
        default=[],
        help="a table to maintain, namespace.table (repeatable; default: the connector's tables)",
    )
    maintain.add_argument(
        "--older-than-hours",
        type=float,
        help="expire snapshots older than this (default: the table's history.expire.max-snapshot-age-ms, else "
        "120, Iceberg's 5 days)",
    )
    maintain.add_argument(
        "--retain-last",
        type=int,
        help="always keep this many newest snapshots (default: the table's history.expire.min-snapshots-to-keep, "
        "else 1)",
    )
    maintain.add_argument(
        "--min-files", type=int, default=2, help="rewrite a partition's small files only when it has at least this many"
    )
    maintain.add_argument("--skip-rewrite", action="store_true", help="do not rewrite small files")
    maintain.add_argument("--skip-expire", action="store_true", help="do not expire snapshots")


def run(config: SinkConfig, args: argparse.Namespace) -> int:
    from pyiceberg.exceptions import CommitFailedException, ValidationException

    from sink_engine.target.iceberg_tables.catalog import open_catalog, table_files  # imports pyarrow
    from sink_engine.target.iceberg_tables.maintain import (  # imports pyiceberg
        Upkeep,
        expire_snapshots,
        rewrite_small_files,
    )

    if not target_for(config).capabilities.tables:
        raise ConfigError("format.class", "`iceberg maintain` needs format.class=IcebergFormat")
    iceberg = IcebergSettings.from_config(config)
    catalog = open_catalog(iceberg)
    for identifier in args.table or connector_tables(config, iceberg, catalog):
        for _ in range(ATTEMPTS):  # a commit that lost to a run's or another writer's: plan again on the new head
            upkeep = Upkeep(identifier)
            try:
                with table_files(identifier, "maintenance"):
                    if not args.skip_rewrite:
                        rewrite_small_files(catalog.load_table(identifier), upkeep, args.min_files)
                    if not args.skip_expire:
                        expire_snapshots(
                            catalog.load_table(identifier),
                            upkeep,
                            None if args.older_than_hours is None else timedelta(hours=args.older_than_hours),
                            args.retain_last,
                        )
                break
            except (CommitFailedException, ValidationException):
                continue
        else:
            raise TableError(
                f"maintenance of table {identifier} kept losing to concurrent commits ({ATTEMPTS} attempts)"
            )
        print(json.dumps(asdict(upkeep)))
    return 0


def connector_tables(config: SinkConfig, iceberg: IcebergSettings, catalog: Catalog) -> list[str]:
    """The tables of the connector's topics (topics.regex: the matching topics Kafka has now); with fan-out by
    field, every table that holds a snapshot of the connector, of the namespaces it declares (else of the catalog);
    with static routing, the tables of `iceberg.tables` that exist (one no record was routed to yet may not)."""
    if iceberg.static_routes is not None:
        return sorted(t for t in iceberg.static_routes.tables if catalog.table_exists(t))
    if iceberg.route_field is not None:
        return _tables_with_snapshots_of(catalog, config.name, iceberg.route_namespaces.declared)
    source = SourceSettings.from_config(config)
    if source.topics is not None:
        topics = set(source.topics)
    else:  # the one place maintenance reads Kafka: a deployed job's brokers are its MSK cluster's, asked for here
        topics = {
            tp.topic
            for tp in partition_watermarks(SourceSettings.from_config(with_cluster_brokers(config, kafka_client)))
        }
    return sorted({iceberg.table_identifier(topic) for topic in topics})


def _tables_with_snapshots_of(catalog: Catalog, connector: str, declared: tuple[str, ...]) -> list[str]:
    """The tables holding a snapshot of `connector` in the namespaces its fan-out `declared` (listing no other, as a
    deployed job role may list those alone), or in every namespace of the catalog and those nested in them."""
    from sink_engine.target.iceberg_tables.catalog import load_table  # imports pyarrow
    from sink_engine.target.iceberg_tables.snapshots import newest_of_connector  # imports pyiceberg

    found: list[str] = []
    namespaces = [tuple(n.split(".")) for n in declared] if declared else list(catalog.list_namespaces())
    while namespaces:
        namespace = namespaces.pop()
        if not declared:
            namespaces += [n for n in catalog.list_namespaces(namespace) if n != namespace]
        for identifier in catalog.list_tables(namespace):
            name = ".".join(identifier)
            if newest_of_connector(load_table(catalog, name), connector) is not None:
                found.append(name)
    return sorted(found)
