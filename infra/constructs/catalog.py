"""Glue database and one table per (connector, topic) with declared columns, partition projection for Athena."""
from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_glue as glue
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.settings import Settings

_SERDES = {  # engine format -> (SerDe, input format, output format)
    "json": ("org.openx.data.jsonserde.JsonSerDe", "org.apache.hadoop.mapred.TextInputFormat",
             "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"),
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
    "avro": ("org.apache.hadoop.hive.serde2.avro.AvroSerDe", "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
             "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat"),
}


def table_name(connector: str, topic: str) -> str:
    return f"{connector}_{topic}".replace("-", "_").replace(".", "_").lower()


class Catalog(Construct):
    """Attributes: `database`, `tables` (name -> CfnTable). Objects sit at `<topics.dir>/<topic>/partition=<n>/`
    (the default partitioner), projected as an integer `partition` key from 0 to kafka_partitions - 1."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, connectors: tuple[ConnectorSpec, ...]):
        super().__init__(scope, id)
        account = Stack.of(self).account
        name = settings.catalog.database
        self.database = glue.CfnDatabase(self, "Database", catalog_id=account,
                                         database_input=glue.CfnDatabase.DatabaseInputProperty(
                                             name=name, description=f"Sink output ({settings.env})"))
        self.tables: dict[str, glue.CfnTable] = {}
        for spec in connectors:
            for topic in spec.topics:
                columns = settings.catalog.columns.get(topic)
                if columns and spec.format in _SERDES:
                    table = self._table(settings, spec, topic, columns, account)
                    table.node.add_dependency(self.database)
                    self.tables[table_name(spec.name, topic)] = table

    def _table(self, settings: Settings, spec: ConnectorSpec, topic: str, columns: dict[str, str], account: str):
        serde, input_format, output_format = _SERDES[spec.format]
        location = f"s3://{settings.bucket_name}/{spec.topics_dir}/{topic}/"
        name = table_name(spec.name, topic)
        return glue.CfnTable(self, f"Table-{name}", catalog_id=account, database_name=settings.catalog.database,
                             table_input=glue.CfnTable.TableInputProperty(
            name=name, table_type="EXTERNAL_TABLE",
            partition_keys=[glue.CfnTable.ColumnProperty(name="partition", type="int")],
            parameters={
                "classification": spec.format, "projection.enabled": "true",
                "projection.partition.type": "integer",
                "projection.partition.range": f"0,{settings.kafka_partitions - 1}",
                "storage.location.template": location + "partition=${partition}/",
            },
            storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                location=location, input_format=input_format, output_format=output_format,
                columns=[glue.CfnTable.ColumnProperty(name=c, type=t) for c, t in columns.items()],
                serde_info=glue.CfnTable.SerdeInfoProperty(serialization_library=serde)),
        ))
