"""Apache Iceberg's Kafka Connect sink (`org.apache.iceberg:iceberg-kafka-connect`, the `connect-peers` bundle of
devtools/connect_peers_dist.py) in a standalone Kafka Connect worker (connect-runtime 3.9.2 of the `debezium` bundle),
writing into a table of Iceberg's JDBC catalog on a SQLite file with its warehouse in moto's S3: the peer of an
IcebergFormat connector in `make bench-peers`.

Why this catalog: sink-engine's SQL catalog is pyiceberg's `SqlCatalog`, whose tables (`iceberg_tables`,
`iceberg_namespace_properties`) are the JDBC catalog's, so pyiceberg reads what the peer committed with no other
server; the warehouse is in moto's S3, as sink-engine's, so both sides pay the same object-store writes (S3FileIO
with path-style requests to moto's endpoint). The catalog file is the peer's own: two writers on one SQLite file
would wait on each other's locks, which neither side has in production.

The worker starts alone (plugins loaded: a warm JVM, as sink-engine's Spark session is warm), then `submit` creates
the connector: values read by JsonConverter without schemas, the table created from the first records
(`iceberg.tables.auto-create-enabled`), commits every `interval_ms` (`iceberg.control.commit.interval-ms`, default
300,000) through the control topic, exactly once (the coordinator commits the table, then the offsets).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from devtools.connect_peers_dist import plugins_dir
from devtools.kafka_connect import ConnectWorker
from devtools.producer import create_topic
from devtools.stack import LocalStack

CATALOG = "iceberg"  # the sink's catalog name (`iceberg.catalog`), the JDBC catalog's `catalog_name` column
NAMESPACE = "peers"


class IcebergPeer:
    """`with IcebergPeer(stack, folder, bucket, tasks) as peer:` a running worker; `peer.submit(topic, interval_ms)`
    starts the sink on `topic` into `peers.<topic>`; `peer.table(topic)` reads that table (None before its
    creation); `peer.pid` is the worker's JVM."""

    def __init__(self, stack: LocalStack, folder: Path, bucket: str, tasks: int):
        self.stack, self.bucket, self.tasks = stack, bucket, tasks
        self.catalog_file = folder / "peer-catalog.db"
        self.worker = ConnectWorker(
            stack.bootstrap_servers, None, plugin_path=plugins_dir(), env={**os.environ, **stack.env}, heap="1g"
        )
        self._catalog: SqlCatalog | None = None

    def __enter__(self) -> IcebergPeer:
        self.worker.__enter__()
        return self

    def __exit__(self, kind, *exc) -> None:
        if kind is not None and self.worker.folder is not None:
            kept = self.catalog_file.parent / f"connect-{os.getpid()}-{int(time.time())}.log"
            shutil.copyfile(self.worker.folder / "connect.log", kept)
            print(f"the Iceberg sink's worker log is kept in {kept}; it ends:\n{self.worker.log_tail(30)}", flush=True)
        self.worker.stop()

    @property
    def pid(self) -> int:
        return self.worker.pid

    def catalog_properties(self) -> dict[str, str]:
        """What the sink's catalog is (`iceberg.catalog.<key>`)."""
        return {
            "catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            "uri": f"jdbc:sqlite:{self.catalog_file}",
            # (sqlite-jdbc's connection property) a writer that finds the file locked waits instead of failing at
            # once with SQLITE_BUSY; the file is in WAL mode already (`_in_wal_mode`)
            "jdbc.busy_timeout": "10000",
            "warehouse": f"s3://{self.bucket}/peer-warehouse",
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": self.stack.aws_endpoint,
            "s3.path-style-access": "true",
            "s3.access-key-id": self.stack.env["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": self.stack.env["AWS_SECRET_ACCESS_KEY"],
            "client.region": self.stack.env["AWS_REGION"],
        }

    def submit(self, topic: str, interval_ms: int) -> None:
        """Start the sink on `topic` (its control topic created first: the broker creates no topic by itself)."""
        control = f"control-{topic}"
        create_topic(self.stack.bootstrap_servers, control, 1)
        _in_wal_mode(self.catalog_file)
        connector = {
            "name": f"iceberg-peer-{topic}",
            "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
            "tasks.max": str(self.tasks),
            "topics": topic,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "iceberg.tables": f"{NAMESPACE}.{topic}",
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.control.topic": control,
            "iceberg.control.commit.interval-ms": str(interval_ms),
            "iceberg.catalog": CATALOG,
            **{f"iceberg.catalog.{key}": value for key, value in self.catalog_properties().items()},
        }
        self.worker.submit(connector)
        self.worker.wait_running()

    def table(self, topic: str) -> Table | None:
        try:
            return self._reader().load_table(f"{NAMESPACE}.{topic}")
        except NoSuchTableError:
            return None

    def _reader(self) -> SqlCatalog:
        """pyiceberg's SqlCatalog on the peer's catalog file, reading its warehouse in moto's S3."""
        if self._catalog is None:
            self._catalog = SqlCatalog(
                CATALOG,
                uri=f"sqlite:///{self.catalog_file}",
                warehouse=f"s3://{self.bucket}/peer-warehouse",
                **{
                    "s3.endpoint": self.stack.aws_endpoint,
                    "s3.access-key-id": self.stack.env["AWS_ACCESS_KEY_ID"],
                    "s3.secret-access-key": self.stack.env["AWS_SECRET_ACCESS_KEY"],
                    "s3.region": self.stack.env["AWS_REGION"],
                },
            )
        return self._catalog


def _in_wal_mode(catalog_file: Path) -> None:
    """Put the catalog's SQLite file in WAL mode (which the file keeps) before any of the sink's connections opens it.
    The bench reads the catalog every 0.25 s: in SQLite's default rollback journal a reader's lock fails a commit at
    once with SQLITE_BUSY, while in WAL readers and the writer go on. Set by each connection instead (sqlite-jdbc's
    `journal_mode`), the mode change itself failed with SQLITE_BUSY, busy timeout or not, when the connector's tasks
    opened the catalog at the same moment (CI, tasks.max 2)."""
    with sqlite3.connect(catalog_file) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
