"""The pyiceberg catalog of a connector and the tables it writes: open, load, create."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import CommitFailedException, NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError
from pyiceberg.table import Table

from sink_engine.errors import ConfigError
from sink_engine.target.iceberg_tables.errors import TableError
from sink_engine.target.iceberg_tables.settings import IcebergSettings

NO_RETRIES = {"commit.retry.num-retries": "0"}
IDENTIFIER_ATTEMPTS = 10


def open_catalog(settings: IcebergSettings) -> Catalog:
    """The catalog that `iceberg.catalog.*` describes."""
    return load_catalog(settings.catalog, **settings.catalog_properties)


def load_table(catalog: Catalog, identifier: str) -> Table | None:
    """The table, or None when it does not exist; TableError when its metadata cannot be read."""
    try:
        return reload_table(catalog, identifier)
    except NoSuchTableError:
        return None


def reload_table(catalog: Catalog, identifier: str) -> Table:
    """The table as it is now (pyiceberg's NoSuchTableError when it does not exist); TableError when its metadata
    cannot be read."""
    with table_files(identifier, "reading its metadata"):
        return catalog.load_table(identifier)


@contextmanager
def table_files(identifier: str, doing: str) -> Iterator[None]:
    """pyiceberg's file IO failing (an OSError of pyarrow's S3 filesystem: a missing metadata file, access
    denied, S3 unreachable) as a TableError naming the table and what was being done."""
    try:
        yield
    except OSError as e:
        raise TableError(f"table {identifier}: {doing} failed: {e}") from e


def without_commit_retries(table: Table) -> Table:
    """The table as loaded, except that pyiceberg will not retry a failed commit on its own.

    pyiceberg retries a snapshot commit that lost a race by rebasing it on the new head without looking at it; the
    exactly-once commit (commit.py) must look first, so it retries itself. The property is set in memory only:
    a commit sends its updates, never the whole metadata."""
    metadata = table.metadata.model_copy(update={"properties": {**table.metadata.properties, **NO_RETRIES}})
    return Table(table.name(), metadata, table.metadata_location, table.io, table.catalog)


def create_table(catalog: Catalog, identifier: str, schema: pa.Schema, settings: IcebergSettings) -> Table:
    """Create the table with this (pyarrow) schema, the connector's partition fields and table properties, or load
    it when another task created it first."""
    try:
        transaction = catalog.create_table_transaction(identifier, schema=schema, properties=settings.table_properties)
        if settings.partition_fields:
            with transaction.update_spec() as spec:
                for source, transform, name in settings.partition_fields:
                    spec.add_field(source, transform, name)
        with table_files(identifier, "writing its first metadata"):
            transaction.commit_transaction()
    except (TableAlreadyExistsError, CommitFailedException):  # the commit of a create asserts that none exists
        existing = load_table(catalog, identifier)
        if existing is None:
            raise
        return existing
    except NoSuchNamespaceError as e:
        raise TableError(
            f"cannot create table {identifier}: its namespace does not exist in catalog "
            f"'{settings.catalog}' (`sink-engine init` creates it): {e}"
        ) from e
    return reload_table(catalog, identifier)


def ensure_namespace(catalog: Catalog, identifier: str) -> bool:
    """Create the table's namespace when it is missing; True when it was created."""
    return ensure_namespace_named(catalog, Catalog.namespace_from(identifier))


def ensure_namespace_named(catalog: Catalog, namespace: str | tuple[str, ...]) -> bool:
    """Create `namespace` when it is missing; True when it was created."""
    try:
        catalog.load_namespace_properties(namespace)
        return False
    except NoSuchNamespaceError:
        catalog.create_namespace_if_not_exists(namespace)
        return True


def required(schema: pa.Schema, id_columns: tuple[str, ...], key: str) -> pa.Schema:
    """The (pyarrow) schema of a new upsert table: its id columns required (Iceberg's identifier fields must be);
    ConfigError naming `key` when the records lack one."""
    for name in id_columns:
        if schema.get_field_index(name) < 0:
            raise ConfigError(key, f"id column {name!r} is not a field of the records ({', '.join(schema.names)})")
    return pa.schema([f.with_nullable(f.name not in id_columns) for f in schema], schema.metadata)


def with_identifier_fields(table: Table, id_columns: tuple[str, ...], key: str) -> Table:
    """The table, its identifier fields set to the id columns when they are not yet (another task may do it at the
    same time); ConfigError naming `key` when one is no column, TableError when one is optional."""
    for _ in range(IDENTIFIER_ATTEMPTS):
        schema = table.schema()
        if schema.identifier_field_names() == set(id_columns):
            return table
        for name in id_columns:
            field = schema.find_field(name) if name in schema.column_names else None
            if field is None:
                raise ConfigError(key, f"id column {name!r} is not a column of table {table.name()}")
            if not field.required:
                raise TableError(
                    f"table {table.name()}: id column {name!r} is optional; Iceberg's identifier fields are required "
                    "columns (a table the upsert mode creates has them so)"
                )
        try:
            with table_files(".".join(table.name()), "setting its identifier fields"), table.update_schema() as update:
                update.set_identifier_fields(*id_columns)
        except CommitFailedException:
            pass
        table = table.catalog.load_table(table.name())
    raise TableError(f"table {table.name()}: setting its identifier fields kept losing to concurrent changes")
