"""Checks of the IcebergFormat keys (`iceberg.*`) at parse time, naming the key at fault."""
from __future__ import annotations

from sink_engine.errors import ConfigError

# Settings of the S3 object path that have no meaning for a table, with why.
_NOT_FOR_TABLES = {
    "behavior.on.null.values": ("write", "tombstones cannot be table rows; use fail or ignore"),
    "store.kafka.keys": (True, "set iceberg.tables.kafka-metadata-enabled for a _kafka_metadata_key column"),
    "store.kafka.headers": (True, "headers are not written to tables"),
}


def check_iceberg_settings(config) -> None:
    """`iceberg.*` keys only with IcebergFormat; with it, a table, a catalog, and no S3-object-only setting."""
    from sink_engine.iceberg.settings import is_iceberg, table_template
    from sink_engine.iceberg.spec import partition_fields

    iceberg_keys = sorted(k for k in (*config.explicit, *config.passthrough) if k.startswith("iceberg."))
    if not is_iceberg(config):
        if iceberg_keys:
            raise ConfigError(iceberg_keys[0], "is only used with format.class=IcebergFormat")
        return
    table_template(config)
    catalog = config["iceberg.catalog.type"]
    if catalog is None:
        raise ConfigError("iceberg.catalog.type", "is required with format.class=IcebergFormat (sql, glue or rest)")
    if catalog == "rest":
        raise ConfigError("iceberg.catalog.type", "rest (an Iceberg REST catalog such as S3 Tables' endpoint) is not "
                                                  "built yet: there is no REST catalog to test it against here; use "
                                                  "glue or sql")
    if catalog == "sql" and not config["iceberg.catalog.uri"]:
        raise ConfigError("iceberg.catalog.uri", f"is required with iceberg.catalog.type={catalog}")
    if catalog == "sql" and not config["iceberg.catalog.warehouse"]:
        raise ConfigError("iceberg.catalog.warehouse", "is required with iceberg.catalog.type=sql (s3://bucket/prefix)")
    for key, (value, why) in _NOT_FOR_TABLES.items():
        if config[key] == value:
            raise ConfigError(key, f"{value} is not supported with format.class=IcebergFormat: {why}")
    partition_fields(config)  # the partitioner must have an Iceberg partition spec
