"""Pure IcebergFormat settings: which table a topic goes to, and the pyiceberg catalog properties.

No pyiceberg import here: config parsing (and the DLQ replay Lambda, which parses configs) uses this module.
"""
from __future__ import annotations

import os
import re

from sink_engine.errors import ConfigError

TOPIC_PLACEHOLDER = "${topic}"
CATALOG_PREFIX = "iceberg.catalog."
TABLE_PROPS_PREFIX = "iceberg.tables.auto-create-props."
_DECLARED_CATALOG_KEYS = ("type", "uri", "warehouse")
# Kafka metadata columns of a row (iceberg.tables.kafka-metadata-enabled), named as the Iceberg sink's
# KafkaMetadataTransform names them when not nested
TOPIC_COLUMN, PARTITION_COLUMN, OFFSET_COLUMN, TIMESTAMP_COLUMN, KEY_COLUMN = (
    f"_kafka_metadata_{name}" for name in ("topic", "partition", "offset", "timestamp", "key"))
METADATA_COLUMNS = (TOPIC_COLUMN, PARTITION_COLUMN, OFFSET_COLUMN, TIMESTAMP_COLUMN, KEY_COLUMN)
RECORD_TIME_COLUMN = "_record_timestamp"  # the time read from timestamp.field, for a time partition (spec.py)
# an S3 table bucket's ARN, the warehouse of S3 Tables' Iceberg REST endpoint
S3_TABLES_BUCKET_ARN = re.compile(r"arn:aws[a-z-]*:s3tables:(?P<region>[a-z0-9-]+):\d{12}:bucket/[a-z0-9][a-z0-9-]*")


def is_iceberg(config) -> bool:
    return config["format.class"] == "iceberg"


def table_template(config) -> str:
    """The `iceberg.tables` entry, checked: `namespace[.namespace...].table`, `${topic}` only in the table part."""
    tables = config["iceberg.tables"]
    if not tables:
        raise ConfigError("iceberg.tables", "is required with format.class=IcebergFormat")
    if len(tables) > 1:
        raise ConfigError("iceberg.tables", "names one table (or a `${topic}` pattern); writing every record to "
                                            "several tables is not built yet")
    template = tables[0]
    parts = template.split(".")
    if len(parts) < 2 or not all(parts):
        raise ConfigError("iceberg.tables", f"{template!r} is not `namespace.table`")
    if any(TOPIC_PLACEHOLDER in part for part in parts[:-1]):
        raise ConfigError("iceberg.tables", f"{template!r}: `${{topic}}` may only appear in the table name")
    return template


def table_identifier(config, topic: str) -> str:
    """The table that records of `topic` go to."""
    return table_template(config).replace(TOPIC_PLACEHOLDER, topic_as_name(topic))


def topic_as_name(topic: str) -> str:
    """A topic as a table name: lower case, characters other than a-z, 0-9 and _ as _ (Glue's rule)."""
    return re.sub(r"[^a-z0-9_]", "_", topic.lower())


def catalog_properties(config) -> dict[str, str]:
    """pyiceberg catalog properties: every `iceberg.catalog.*` key without its prefix. The S3 endpoint and region
    of the data files default to the engine's own (`store.url`, else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, as
    boto3 reads them; `s3.region`), and so does Glue's region (boto3 reads AWS_DEFAULT_REGION, not the
    AWS_REGION the deployed job is given)."""
    properties = {name: config[CATALOG_PREFIX + name] for name in _DECLARED_CATALOG_KEYS
                  if config[CATALOG_PREFIX + name] is not None}
    properties.update({k[len(CATALOG_PREFIX):]: v for k, v in config.passthrough.items()
                       if k.startswith(CATALOG_PREFIX)})
    endpoint = config["store.url"] or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        properties.setdefault("s3.endpoint", endpoint)
    properties.setdefault("s3.region", config["s3.region"])
    if config["iceberg.catalog.type"] == "glue" and "client.region" not in properties:
        properties.setdefault("glue.region", config["s3.region"])
    if config["iceberg.catalog.type"] == "rest":
        for name, value in s3_tables_defaults(properties.get("warehouse")).items():
            properties.setdefault(name, value)
    return properties


def s3_tables_defaults(warehouse: str | None) -> dict[str, str]:
    """With a table bucket's ARN as the REST catalog's warehouse, S3 Tables' catalog properties as AWS documents
    them for pyiceberg: the region's Iceberg REST endpoint, requests signed with SigV4 as `s3tables` in the bucket's
    region. Nothing for another warehouse (another REST catalog)."""
    match = S3_TABLES_BUCKET_ARN.fullmatch(warehouse or "")
    if not match:
        return {}
    region = match["region"]
    return {"uri": f"https://s3tables.{region}.amazonaws.com/iceberg", "rest.sigv4-enabled": "true",
            "rest.signing-name": "s3tables", "rest.signing-region": region}


def check_rest_catalog(config) -> None:
    """A REST catalog needs its endpoint: `iceberg.catalog.uri`, or a table bucket's ARN as the warehouse."""
    if not config["iceberg.catalog.uri"] and not s3_tables_defaults(config["iceberg.catalog.warehouse"]):
        raise ConfigError("iceberg.catalog.uri", "is required with iceberg.catalog.type=rest unless "
                                                 "iceberg.catalog.warehouse is an S3 table bucket's ARN "
                                                 "(arn:aws:s3tables:<region>:<account>:bucket/<name>)")


def table_properties(config) -> dict[str, str]:
    """Properties of an auto-created table: every `iceberg.tables.auto-create-props.*` key without its prefix."""
    return {k[len(TABLE_PROPS_PREFIX):]: v for k, v in config.passthrough.items() if k.startswith(TABLE_PROPS_PREFIX)}
