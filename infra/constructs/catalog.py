"""Glue database and one Athena table per (connector, topic) whose objects form a table: partition projection of
the connector's key layout (infra/table_layout.py), columns and SerDe from the topic's schema as the engine writes
its format (infra/table_columns.py)."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_glue as glue
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.errors import SettingsError
from infra.settings import Settings
from infra.stacks.connectors import ConnectorStacks
from infra.table_columns import TableStorage, table_storage
from infra.table_layout import Layout, data_objects, layout
from sink_engine.task.settings import SidecarSettings

# Table parameter holding data_objects(config): the pattern of the keys of data objects (not sidecars).
DATA_OBJECTS_PARAMETER = "sink_engine.data_objects"


def table_name(connector: str, topic: str) -> str:
    return f"{connector}_{topic}".replace("-", "_").replace(".", "_").lower()


def sidecar_note(spec: ConnectorSpec) -> str:
    """What Athena reads beside the data objects, under the same partition folders, and the filter that skips it."""
    config, read = spec.config, []
    if spec.format == "blockgzip":
        read.append("each object's <stem>.index.json as one row whose columns are all null")
    sidecars = SidecarSettings.from_config(config)
    if sidecars.keys_format or sidecars.headers_format:  # store.kafka.keys, store.kafka.headers
        # (Avro sidecars hold bare keys and header lists, as the connector writes them: the table's record schema
        # cannot read them as rows at all)
        read.append("the <stem>.keys and <stem>.headers sidecars as rows too (Avro ones not at all)")
    if not read:
        return ""
    return f"Athena reads {' and '.join(read)}: filter with WHERE regexp_like(\"$path\", '{data_objects(config)}')"


class Catalog(Construct):
    """Attributes: `database`, `tables` (name -> CfnTable). A topic gets a table when its connector's output is
    tabular and its columns are known (see infra/table_columns.py): a declared schema in `catalog.tables`, or
    String/ByteArray values in Parquet or Avro."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        placement: ConnectorStacks,
    ):
        super().__init__(scope, id)
        account = Stack.of(self).account
        name = settings.catalog.database
        self.database = glue.CfnDatabase(
            self,
            "Database",
            catalog_id=account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(
                name=name, description=f"Sink output ({settings.env})"
            ),
        )
        self.tables: dict[str, glue.CfnTable] = {}
        for spec in connectors:
            if spec.iceberg:  # its tables are Iceberg tables in their own databases (the data stack's), made by the job
                continue
            for topic in spec.written or spec.topics:  # the topics its objects lie under (routed)
                declared = settings.catalog.tables.get(topic)
                schema = declared.schema if declared else None
                if table_storage(spec.config, topic, schema, settings.source) is None:
                    continue
                projected = layout(
                    spec.config,
                    topic,
                    settings.bucket_name,
                    source=spec.source,
                    kafka_partitions=settings.kafka_partitions,
                    field_values=declared.field_values if declared else {},
                    time_range_start=settings.catalog.time_range_start,
                    settings_source=settings.source,
                )
                storage = table_storage(spec.config, topic, schema, settings.source, _partitioning_fields(projected))
                assert storage is not None  # tabular (above)
                _check_names(settings.source, topic, storage, projected)
                table = self._table(
                    placement.scope(self, spec.name), settings, spec, topic, storage, projected, account
                )
                table.node.add_dependency(self.database)
                self.tables[table_name(spec.name, topic)] = table

    @staticmethod
    def _table(
        scope: Construct,
        settings: Settings,
        spec: ConnectorSpec,
        topic: str,
        storage: TableStorage,
        projected: Layout,
        account: str,
    ) -> glue.CfnTable:
        name = table_name(spec.name, topic)
        return glue.CfnTable(
            scope,
            f"Table-{name}",
            catalog_id=account,
            database_name=settings.catalog.database,
            table_input=glue.CfnTable.TableInputProperty(
                name=name,
                table_type="EXTERNAL_TABLE",
                description=f"{topic} as written by connector {spec.name}. {sidecar_note(spec)}".strip(),
                partition_keys=[glue.CfnTable.ColumnProperty(name=c.name, type=c.type) for c in projected.columns],
                parameters={
                    "classification": storage.classification,
                    **projected.parameters(),
                    DATA_OBJECTS_PARAMETER: data_objects(spec.config),
                },
                storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                    location=projected.location,
                    input_format=storage.input_format,
                    output_format=storage.output_format,
                    columns=[glue.CfnTable.ColumnProperty(name=c, type=t) for c, t in storage.columns],
                    serde_info=glue.CfnTable.SerdeInfoProperty(
                        serialization_library=storage.serde, parameters=storage.serde_parameters or None
                    ),
                ),
            ),
        )


def _partitioning_fields(projected: Layout) -> frozenset[str]:
    """Top-level fields that partition the objects: their partition columns (same name) hold their values, so the
    table leaves the fields out (Athena refuses a data column named as a partition column)."""
    return frozenset(c.name for c in projected.columns if c.field is not None and c.field.lower() == c.name)


def _check_names(source: str, topic: str, storage: TableStorage, projected: Layout) -> None:
    """Any other data column named as a partition column (`partition`, `time_bucket`, `a_b` for field `a.b`) is an
    error: Athena refuses such a table."""
    data = {name for name, _ in storage.columns}
    for column in projected.columns:
        if column.name in data:
            raise SettingsError(
                source,
                f"catalog.tables.{topic}",
                f"the field {column.name!r} has the name of "
                "the layout's partition column; Athena refuses a table with both",
            )
