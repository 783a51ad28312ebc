"""IcebergFormat keys: parsed, defaulted, passed to pyiceberg, and errors that name the key at fault."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.target.iceberg_tables.settings import IcebergSettings, catalog_properties, table_properties
from sink_engine.validation import parse_checked_config

BASE = {
    "name": "orders-to-table",
    "topics": "orders",
    "bootstrap.servers": "127.0.0.1:9092",
    "s3.bucket.name": "lake",
    "flush.size": "1000",
    "format.class": "IcebergFormat",
    "iceberg.tables": "analytics.orders",
    "iceberg.catalog.type": "sql",
    "iceberg.catalog.uri": "sqlite:////tmp/catalog.db",
    "iceberg.catalog.warehouse": "s3://lake/warehouse",
}


def test_iceberg_keys_and_their_defaults():
    config = parse_checked_config(BASE)
    assert config["format.class"] == "iceberg"
    assert config["iceberg.tables"] == ("analytics.orders",)
    assert config["iceberg.catalog"] == "iceberg"
    assert config["iceberg.tables.auto-create-enabled"] is False
    assert config["iceberg.tables.evolve-schema-enabled"] is False
    assert config["iceberg.tables.kafka-metadata-enabled"] is False
    assert config.unknown == ()


def test_every_catalog_key_is_a_pyiceberg_property(monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    config = parse_checked_config(
        {
            **BASE,
            "iceberg.catalog.s3.endpoint": "http://127.0.0.1:5000",
            "iceberg.catalog.glue.id": "123456789012",
            "s3.region": "eu-west-1",
            "iceberg.tables.auto-create-props.write.target-file-size-bytes": "1048576",
        }
    )
    assert catalog_properties(config) == {
        "type": "sql",
        "uri": "sqlite:////tmp/catalog.db",
        "warehouse": "s3://lake/warehouse",
        "s3.endpoint": "http://127.0.0.1:5000",
        "glue.id": "123456789012",
        "s3.region": "eu-west-1",
    }
    assert table_properties(config) == {"write.target-file-size-bytes": "1048576"}
    assert config.unknown == ()


def test_s3_endpoint_follows_the_engine(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://moto:5000")
    assert catalog_properties(parse_checked_config(BASE))["s3.endpoint"] == "http://moto:5000"
    assert (
        catalog_properties(parse_checked_config({**BASE, "store.url": "http://s3:9000"}))["s3.endpoint"]
        == "http://s3:9000"
    )


def test_glue_region_follows_the_engine_unless_set():
    glue = {**BASE, "iceberg.catalog.type": "glue", "s3.region": "eu-west-1"}
    del glue["iceberg.catalog.uri"], glue["iceberg.catalog.warehouse"]
    assert catalog_properties(parse_checked_config(glue))["glue.region"] == "eu-west-1"
    glue_region = parse_checked_config({**glue, "iceberg.catalog.glue.region": "us-east-1"})
    assert catalog_properties(glue_region)["glue.region"] == "us-east-1"
    client_region = parse_checked_config({**glue, "iceberg.catalog.client.region": "us-east-1"})
    assert "glue.region" not in catalog_properties(client_region)
    assert "glue.region" not in catalog_properties(parse_checked_config(BASE))  # a SQL catalog has none


S3_TABLES = {
    **{k: v for k, v in BASE.items() if k != "iceberg.catalog.uri"},
    "iceberg.catalog.type": "rest",
    "s3.region": "eu-west-1",
    "iceberg.catalog.warehouse": "arn:aws:s3tables:us-east-2:111122223333:bucket/lake-tables",
}


def test_a_table_bucket_arn_brings_s3_tables_rest_defaults():
    """AWS's documented pyiceberg properties for S3 Tables: the region's endpoint, SigV4 signed as s3tables."""
    properties = catalog_properties(parse_checked_config(S3_TABLES))
    assert {
        k: properties[k]
        for k in ("type", "uri", "warehouse", "rest.sigv4-enabled", "rest.signing-name", "rest.signing-region")
    } == {
        "type": "rest",
        "uri": "https://s3tables.us-east-2.amazonaws.com/iceberg",
        "warehouse": "arn:aws:s3tables:us-east-2:111122223333:bucket/lake-tables",
        "rest.sigv4-enabled": "true",
        "rest.signing-name": "s3tables",
        "rest.signing-region": "us-east-2",
    }


def test_rest_catalog_keys_override_the_s3_tables_defaults_and_pass_through():
    config = parse_checked_config(
        {
            **S3_TABLES,
            "iceberg.catalog.uri": "http://127.0.0.1:8181",
            "iceberg.catalog.rest.signing-region": "us-west-2",
            "iceberg.catalog.rest.sigv4.max-retries": "3",
        }
    )
    properties = catalog_properties(config)
    assert properties["uri"] == "http://127.0.0.1:8181" and properties["rest.signing-region"] == "us-west-2"
    assert properties["rest.signing-name"] == "s3tables" and properties["rest.sigv4.max-retries"] == "3"


def test_another_rest_catalog_gets_no_s3_tables_defaults():
    properties = catalog_properties(
        parse_checked_config(
            {**BASE, "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "https://catalog.example.com"}
        )
    )
    assert not any(k.startswith("rest.") for k in properties) and properties["uri"] == "https://catalog.example.com"


@pytest.mark.parametrize(
    "template, topic, table",
    [
        ("analytics.orders", "anything", "analytics.orders"),
        ("analytics.raw_${topic}", "Orders.EU-1", "analytics.raw_orders_eu_1"),
        ("lake.bronze.${topic}", "clicks", "lake.bronze.clicks"),
    ],
)
def test_table_per_topic(template, topic, table):
    config = parse_checked_config({**BASE, "iceberg.tables": template})
    assert IcebergSettings.from_config(config).table_identifier(topic) == table


ROUTER = "org.apache.kafka.connect.transforms.RegexRouter"


@pytest.mark.parametrize(
    "routers, table",
    [
        (
            {
                "transforms": "a",
                "transforms.a.type": ROUTER,
                "transforms.a.regex": "orders-(.*)",
                "transforms.a.replacement": "o-$1",
            },
            "analytics.raw_o_eu",
        ),
        (
            {
                "transforms": "a,b",
                "transforms.a.type": ROUTER,
                "transforms.a.regex": "orders-(.*)",
                "transforms.a.replacement": "o-$1",
                "transforms.b.type": ROUTER,
                "transforms.b.regex": "o-(.*)",
                "transforms.b.replacement": "$1-orders",
            },
            "analytics.raw_eu_orders",
        ),
        (
            {
                "transforms": "a",
                "transforms.a.type": ROUTER,
                "transforms.a.regex": "clicks",
                "transforms.a.replacement": "c",
            },
            "analytics.raw_orders_eu",
        ),
    ],
)
def test_a_topics_table_is_that_of_its_routed_name(routers, table):
    # given RegexRouters in order (the last one matching nothing), when a topic's table is named, then it is the
    # table of the name every router in turn makes of it
    config = parse_checked_config({**BASE, "iceberg.tables": "analytics.raw_${topic}", **routers})
    assert IcebergSettings.from_config(config).table_identifier("orders-eu") == table


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        ({"iceberg.tables": None}, "iceberg.tables", "is required with format.class=IcebergFormat"),
        ({"iceberg.tables": "orders"}, "iceberg.tables", "is not `namespace.table`"),
        ({"iceberg.tables": "a.b,c"}, "iceberg.tables", "is not `namespace.table`"),
        ({"iceberg.tables": "${topic}.t"}, "iceberg.tables", "may only appear in the table name"),
        ({"iceberg.catalog.type": None}, "iceberg.catalog.type", "is required"),
        ({"iceberg.catalog.type": "hive"}, "iceberg.catalog.type", "expected one of sql, glue, rest"),
        ({"iceberg.catalog.uri": None}, "iceberg.catalog.uri", "is required with iceberg.catalog.type=sql"),
        (
            {"iceberg.catalog.type": "rest", "iceberg.catalog.uri": None, "iceberg.catalog.warehouse": "s3://lake/w"},
            "iceberg.catalog.uri",
            "is required with iceberg.catalog.type=rest unless iceberg.catalog.warehouse is an S3 table bucket's ARN",
        ),
        ({"iceberg.catalog.warehouse": None}, "iceberg.catalog.warehouse", "is required with iceberg.catalog.type=sql"),
        ({"behavior.on.null.values": "write"}, "behavior.on.null.values", "tombstones cannot be table rows"),
        ({"store.kafka.keys": "true"}, "store.kafka.keys", "kafka-metadata-enabled"),
        ({"iceberg.tables.default-id-columns": "id"}, "iceberg.tables.default-id-columns", "upsert tables only"),
        ({"iceberg.tables.route-field": "region"}, "iceberg.tables.route-field", "route-regex"),
        ({"format.class": "ParquetFormat"}, "iceberg.catalog.type", "only used with format.class=IcebergFormat"),
        ({"keys.format.class": "IcebergFormat"}, "keys.format.class", "is not built yet"),
    ],
)
def test_errors_name_the_key(overrides, key, message):
    raw = {**BASE, **overrides}
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({k: v for k, v in raw.items() if v is not None})
    assert caught.value.key == key and message in str(caught.value)


def test_other_formats_are_untouched_by_iceberg_keys():
    raw = {k: v for k, v in BASE.items() if not k.startswith("iceberg.")} | {"format.class": "JsonFormat"}
    config = parse_checked_config(raw)
    assert config["iceberg.tables"] is None and config["iceberg.catalog.type"] is None


@pytest.mark.parametrize(
    "overrides, fields, extra",
    [
        ({}, [], ()),
        (
            {"partitioner.class": "FieldPartitioner", "partition.field.name": "region,address.city"},
            [("region", "identity", "region"), ("address.city", "identity", "address_city")],
            (),
        ),
        (
            {"partitioner.class": "DailyPartitioner", "timestamp.extractor": "Record"},
            [("_kafka_metadata_timestamp", "day", "kafka_metadata_timestamp_day")],
            ("_kafka_metadata_timestamp",),
        ),
        (
            {"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "RecordField", "timestamp.field": "ts"},
            [("_record_timestamp", "hour", "record_timestamp_hour")],
            ("_record_timestamp",),
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "partition.duration.ms": "86400000",
                "path.format": "'d'=dd",
                "timestamp.extractor": "Record",
                "iceberg.tables.kafka-metadata-enabled": "true",
            },
            [("_kafka_metadata_timestamp", "day", "kafka_metadata_timestamp_day")],
            (
                "_kafka_metadata_topic",
                "_kafka_metadata_partition",
                "_kafka_metadata_offset",
                "_kafka_metadata_timestamp",
                "_kafka_metadata_key",
            ),
        ),
        (
            {
                "partitioner.class": "FieldAndTimeBasedPartitioner",
                "partition.field.name": "region",
                "partition.duration.ms": "3600000",
                "path.format": "'h'=HH",
                "timestamp.extractor": "Record",
            },
            [("region", "identity", "region"), ("_kafka_metadata_timestamp", "hour", "kafka_metadata_timestamp_hour")],
            ("_kafka_metadata_timestamp",),
        ),
    ],
)
def test_partitioner_as_partition_spec(overrides, fields, extra):
    settings = IcebergSettings.from_config(parse_checked_config({**BASE, **overrides}))
    assert list(settings.partition_fields) == fields and settings.extra_columns == extra


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        ({"partitioner.class": "DailyPartitioner"}, "timestamp.extractor", "Wallclock cannot partition"),
        (
            {"partitioner.class": "DailyPartitioner", "timestamp.extractor": "Record", "timezone": "Europe/Paris"},
            "timezone",
            "is not UTC",
        ),
        (
            {
                "partitioner.class": "TimeBasedPartitioner",
                "partition.duration.ms": "600000",
                "path.format": "'m'=mm",
                "timestamp.extractor": "Record",
            },
            "partition.duration.ms",
            "has no Iceberg transform",
        ),
    ],
)
def test_partitioners_without_a_partition_spec(overrides, key, message):
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({**BASE, **overrides})
    assert caught.value.key == key and message in str(caught.value)


@pytest.mark.parametrize(
    "overrides, null_values, origin",
    [
        ({}, "write", "from iceberg.tables.upsert-mode-enabled (a tombstone deletes its row)"),
        ({"behavior.on.null.values": "fail"}, "fail", "set"),
        ({"behavior.on.null.values": "ignore"}, "ignore", "set"),
        ({"iceberg.tables.upsert-mode-enabled": "false", "iceberg.tables.default-id-columns": None}, "fail", "default"),
        ({"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "__table"}, "fail", "default"),
    ],
)
def test_an_upsert_tables_tombstones_delete_unless_the_key_says_otherwise(overrides, null_values, origin):
    # given an upsert table's connector with only its upsert keys set, or a written behavior.on.null.values
    raw = {**BASE, "iceberg.tables.upsert-mode-enabled": "true", "iceberg.tables.default-id-columns": "id", **overrides}
    # when it is parsed and checked
    config = parse_checked_config({k: v for k, v in raw.items() if v is not None})
    # then tombstones delete rows (write) unless the key is written, or records route to their tables by a field;
    # validate reports where the value comes from
    row = next(row for row in config.effective() if row[0] == "behavior.on.null.values")
    assert row[1:] == (null_values, origin)


def test_validate_says_where_an_upsert_tables_tombstone_behaviour_comes_from():
    from sink_engine.config.display import validation_report

    # given an upsert table's connector that does not set behavior.on.null.values
    config = parse_checked_config(
        {**BASE, "iceberg.tables.upsert-mode-enabled": "true", "iceberg.tables.default-id-columns": "id"}
    )
    # when validate reports it, then the line names the value and the key that implies it
    line = next(line for line in validation_report(config, (), False) if line.startswith("behavior.on.null.values"))
    assert line.split()[1:4] == ["write", "(from", "iceberg.tables.upsert-mode-enabled"]


def test_commit_threads_default_to_eight_and_are_at_least_one():
    assert IcebergSettings.from_config(parse_checked_config(BASE)).commit_threads == 8
    threads = parse_checked_config({**BASE, "iceberg.control.commit.threads": "3"})
    assert IcebergSettings.from_config(threads).commit_threads == 3
    with pytest.raises(ConfigError) as refused:
        parse_checked_config({**BASE, "iceberg.control.commit.threads": "0"})
    assert refused.value.key == "iceberg.control.commit.threads"
