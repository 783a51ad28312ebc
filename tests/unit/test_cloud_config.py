"""Confluent Cloud S3 sink configs (`connector.class: S3_SINK`): what each Cloud key means here, the Cloud
defaults, the keys it refuses, and Java's short zone ids for `timezone`."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from sink_engine import cli
from sink_engine.config.keys import CONVERTER_CLASSES, KEYS_BY_NAME
from sink_engine.errors import ConfigError
from sink_engine.partition.time_buckets import parse_zone
from sink_engine.validation import parse_checked_config

# The quick start's connector JSON of the seed page (001), placeholders filled in, plus the MSK address that a
# Cloud config does not carry.
QUICK_START = {
    "name": "confluent-s3-sink",
    "connector.class": "S3_SINK",
    "kafka.api.key": "my-kafka-api-key",
    "kafka.api.secret": "my-kafka-api-secret",
    "aws.access.key.id": "my-aws-access-key",
    "aws.secret.access.key": "my-aws-access-key-secret",
    "input.data.format": "JSON",
    "output.data.format": "JSON",
    "compression.codec": "JSON - gzip",
    "s3.compression.level": "6",
    "s3.bucket.name": "my-bucket-name",
    "time.interval": "HOURLY",
    "flush.size": "1000",
    "tasks.max": "1",
    "topics": "topic-1, topic-2",
    "bootstrap.servers": "b-1.example:9096",
}


def cloud(**changes) -> dict:
    raw = {**QUICK_START, **{k.replace("_", "."): v for k, v in changes.items()}}
    return {k: v for k, v in raw.items() if v is not None}


def test_the_quick_start_config_means_hourly_gzip_json_of_schemaless_values():
    config = parse_checked_config(QUICK_START)
    assert config["format.class"] == "json" and config["s3.compression.type"] == "gzip"
    assert config["s3.compression.level"] == 6
    assert config["value.converter"] == "json" and config["value.converter.schemas.enable"] is False
    assert config["partitioner.class"] == "time" and config["partition.duration.ms"] == 3_600_000
    assert config["path.format"] == "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
    assert config["timestamp.extractor"] == "record" and config["rotate.interval.ms"] == 3_600_000
    assert config["topics"] == ("topic-1", "topic-2") and config["topics.dir"] == "topics"
    assert config.derived["format.class"] == "output.data.format"
    assert dict((k, o) for k, _, o in config.effective())["value.converter"] == "from input.data.format"


def test_cloud_defaults_apply_to_what_the_file_leaves_out():
    config = parse_checked_config(cloud(flush_size=None))
    assert config["flush.size"] == 1000 and config.derived["flush.size"] == "connector.class"
    # a Cloud connector does not stop on a bad record: it goes to a dead-letter topic created for it, with headers
    assert config["errors.tolerance"] == "all"
    assert config["errors.deadletterqueue.topic.name"] == "dlq-confluent-s3-sink"
    assert config["errors.deadletterqueue.context.headers.enable"] is True
    kept = parse_checked_config(cloud(**{"errors.tolerance": "none"}))
    assert kept["errors.tolerance"] == "none" and kept["errors.deadletterqueue.topic.name"] == ""
    # the self-managed connector keeps its own defaults
    with pytest.raises(ConfigError, match="'flush.size': is required"):
        parse_checked_config(
            {
                "name": "c",
                "topics": "t",
                "bootstrap.servers": "b:9092",
                "s3.bucket.name": "lake",
                "format.class": "JsonFormat",
            }
        )


@pytest.mark.parametrize(
    "fmt, converter, extra",
    [
        ("AVRO", "avro", {"value.converter.schema.registry.url": "http://registry:8081"}),
        ("JSON", "json", {}),
        ("STRING", "string", {}),
        ("BYTES", "bytearray", {}),
        ("json", "json", {}),
    ],
)
def test_input_data_format_selects_the_value_converter(fmt, converter, extra):
    config = parse_checked_config(cloud(input_data_format=fmt, **extra))
    assert config["value.converter"] == converter


@pytest.mark.parametrize(
    "fmt, class_name",
    [
        ("PROTOBUF", "io.confluent.connect.protobuf.ProtobufConverter"),
        ("JSON_SR", "io.confluent.connect.json.JsonSchemaConverter"),
    ],
)
def test_schema_registry_protobuf_and_json_schema_name_confluents_converters(fmt, class_name):
    """Mapped to Confluent's class names; until a converter of that class is built, the refusal names the key."""
    raw = cloud(input_data_format=fmt, **{"value.converter.schema.registry.url": "http://registry:8081"})
    built = [
        c
        for c, spellings in CONVERTER_CLASSES.items()
        if class_name in spellings and c in KEYS_BY_NAME["value.converter"].built
    ]
    if built:
        assert parse_checked_config(raw)["value.converter"] == built[0]
    else:
        with pytest.raises(ConfigError) as caught:
            parse_checked_config(raw)
        assert caught.value.key == "input.data.format" and class_name in str(caught.value)


@pytest.mark.parametrize(
    "fmt, codec, key, value",
    [
        ("AVRO", "AVRO - bzip2", "avro.codec", "bzip2"),
        ("AVRO", "AVRO - deflate", "avro.codec", "deflate"),
        ("AVRO", "AVRO - snappy", "avro.codec", "snappy"),
        ("BYTES", "BYTES - gzip", "s3.compression.type", "gzip"),
        ("JSON", "JSON - gzip", "s3.compression.type", "gzip"),
        ("PARQUET", "PARQUET - gzip", "parquet.codec", "gzip"),
        ("PARQUET", "PARQUET - snappy", "parquet.codec", "snappy"),
        ("PARQUET", "PARQUET - none", "parquet.codec", "none"),
    ],
)
def test_output_data_format_and_compression_codec_select_format_and_codec(fmt, codec, key, value):
    config = parse_checked_config(cloud(output_data_format=fmt, compression_codec=codec, input_data_format="STRING"))
    assert config["format.class"] == {"BYTES": "bytearray"}.get(fmt, fmt.lower())
    assert config[key] == value and config.derived[key] == "compression.codec"


def test_without_a_codec_each_format_keeps_its_default():
    config = parse_checked_config(cloud(output_data_format="PARQUET", compression_codec=None))
    assert config["format.class"] == "parquet" and config["parquet.codec"] == "snappy"


@pytest.mark.parametrize(
    "changes, key, message",
    [
        (
            {"compression.codec": "AVRO - deflate"},
            "compression.codec",
            "is for AVRO output, but output.data.format is JSON",
        ),
        ({"compression.codec": "JSON - zstd"}, "compression.codec", "expected one of AVRO - bzip2"),
        ({"output.data.format": "CSV"}, "output.data.format", "expected one of AVRO, JSON, PARQUET, BYTES"),
        ({"input.data.format": "XML"}, "input.data.format", "expected one of AVRO, JSON_SR, PROTOBUF"),
        ({"input.data.format": None}, "input.data.format", "is required with connector.class S3_SINK"),
        ({"output.data.format": None}, "output.data.format", "is required with connector.class S3_SINK"),
        ({"time.interval": None}, "time.interval", "is required with connector.class S3_SINK"),
        ({"time.interval": "WEEKLY"}, "time.interval", "expected HOURLY or DAILY"),
        ({"format.class": "AvroFormat"}, "output.data.format", "the file sets format.class to AvroFormat"),
        ({"partitioner.class": "FieldPartitioner"}, "time.interval", "sets partitioner.class to FieldPartitioner"),
        ({"value.converter.schemas.enable": "true"}, "input.data.format", "value.converter.schemas.enable"),
        ({"kafka.auth.mode": "SERVICE_ACCOUNT"}, "kafka.auth.mode", "two identities"),
        ({"kafka.service.account.id": "sa-123"}, "kafka.service.account.id", "two identities"),
        ({"kafka.auth.mode": "OAUTH"}, "kafka.auth.mode", "expected KAFKA_API_KEY or SERVICE_ACCOUNT"),
        ({"provider.integration.id": "cspi-1"}, "provider.integration.id", "remove aws.access.key.id"),
        (
            {
                "provider.integration.id": "cspi-1",
                "aws.access.key.id": None,
                "aws.secret.access.key": None,
                "s3.credentials.provider.class": "EnvironmentVariableCredentialsProvider",
            },
            "provider.integration.id",
            "the file sets s3.credentials.provider.class to EnvironmentVariableCredentialsProvider",
        ),
        ({"authentication.method": "IAM Roles"}, "authentication.method", "remove aws.access.key.id"),
        ({"kafka.api.secret": None}, "kafka.api.secret", "is required with kafka.api.key"),
        ({"aws.access.key.id": None}, "aws.access.key.id", "is required with aws.secret.access.key"),
        ({"schema.context.name": "orders"}, "schema.context.name", "other than the default"),
        ({"transforms": "mask", "transforms.mask.type": "x"}, "transforms.mask.type", "is not a transform class"),
    ],
)
def test_what_the_engine_cannot_do_is_an_error_naming_the_key(changes, key, message):
    with pytest.raises(ConfigError) as caught:
        parse_checked_config(cloud(**changes))
    assert caught.value.key == key and message in str(caught.value)


def test_a_service_account_is_the_jobs_own_kafka_identity():
    # given a Cloud config that reads Kafka as a service account (no API key)
    config = parse_checked_config(
        cloud(
            **{
                "kafka.auth.mode": "SERVICE_ACCOUNT",
                "kafka.service.account.id": "sa-1",
                "kafka.api.key": None,
                "kafka.api.secret": None,
            }
        )
    )
    # then it validates: the job's own identity reads Kafka, the value is recorded, no SASL login is derived
    assert config["kafka.service.account.id"] == "sa-1"
    assert "sasl.username" not in config.consumer_overrides()


def test_a_self_managed_key_that_agrees_with_the_cloud_key_is_accepted():
    config = parse_checked_config(
        cloud(
            **{
                "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "'dt'=YYYY-MM-dd/'hr'=HH",
                "timestamp.field": "ts",
                "rotate.interval.ms": "600000",
            }
        )
    )
    assert config["path.format"] == "'dt'=YYYY-MM-dd/'hr'=HH" and config["rotate.interval.ms"] == 600_000
    assert config["timestamp.extractor"] == "recordfield" and config["timestamp.field"] == "ts"


def test_daily_interval():
    config = parse_checked_config(cloud(time_interval="DAILY"))
    assert config["partition.duration.ms"] == 86_400_000 and config["path.format"] == "'year'=YYYY/'month'=MM/'day'=dd"


def test_cloud_keys_in_a_self_managed_config_are_ignored_and_reported_as_kafka_connect_does():
    # Kafka Connect hands the self-managed connector every key; it defines none of Cloud's, so they are unused
    # (logged as a warning) and change nothing
    config = parse_checked_config(
        cloud(
            **{"connector.class": "io.confluent.connect.s3.S3SinkConnector", "format.class": "json", "flush.size": "10"}
        )
    )
    ignored = {i.key: i.reason for i in config.ignored}
    assert {"input.data.format", "output.data.format", "time.interval"} <= set(ignored)
    assert all("Confluent Cloud key" in ignored[k] and "S3_SINK" in ignored[k] for k in ignored)
    # and they take no effect: no converter, format or partitioner of theirs
    assert config["s3.compression.type"] == "none"  # not compression.codec's "JSON - gzip"
    assert config["format.class"] == "json" and config["partitioner.class"] == "default"  # not time.interval's
    assert config["input.data.format"] is None and "input.data.format" not in config.explicit


@pytest.mark.parametrize(
    "zone, instant, offset_hours",
    [
        ("PST", datetime(2024, 1, 15, tzinfo=UTC), -8),  # America/Los_Angeles, standard time
        ("PST", datetime(2024, 7, 15, tzinfo=UTC), -7),  # and daylight saving time
        ("EST", datetime(2024, 7, 15, tzinfo=UTC), -5),  # Java: a fixed -05:00, no DST
        ("MST", datetime(2024, 7, 15, tzinfo=UTC), -7),
        ("HST", datetime(2024, 7, 15, tzinfo=UTC), -10),
        ("ECT", datetime(2024, 7, 15, tzinfo=UTC), 2),  # Europe/Paris
        ("IST", datetime(2024, 7, 15, tzinfo=UTC), 5.5),  # Asia/Kolkata
        ("CST", datetime(2024, 1, 15, tzinfo=UTC), -6),  # America/Chicago
        ("AET", datetime(2024, 1, 15, tzinfo=UTC), 11),  # Australia/Sydney, summer
    ],
)
def test_java_short_zone_ids_map_as_java_maps_them(zone, instant, offset_hours):
    assert instant.astimezone(parse_zone(zone)).utcoffset().total_seconds() == offset_hours * 3600
    assert parse_checked_config(cloud(timezone=zone))["timezone"] == zone


def test_short_ids_are_case_sensitive_as_in_java():
    with pytest.raises(ConfigError, match="'timezone'"):
        parse_checked_config(cloud(timezone="pst"))


def test_validate_says_where_each_value_comes_from_and_masks_credentials(tmp_path, capsys):
    path = tmp_path / "cloud.json"
    path.write_text(
        json.dumps(
            cloud(
                **{
                    "kafka.api.secret": "${secrets:cc/api:secret}",
                    "flush.size": None,
                    "config.action.reload": "restart",
                }
            )
        )
    )
    assert cli.main(["validate", "--config", str(path)]) == 0  # references are not read by validate
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["format.class"].split()[1:] == [
        "io.confluent.connect.s3.format.json.JsonFormat",
        "(from",
        "output.data.format)",
    ]
    assert lines["flush.size"].split()[1:] == ["1000", "(from", "connector.class)"]
    assert lines["s3.compression.type"].split()[1:] == ["gzip", "(from", "compression.codec)"]
    assert lines["kafka.api.secret"].split()[1] == "${secrets:cc/api:secret}"
    assert lines["aws.secret.access.key"].split()[1] == "********"
    assert "(accepted, no effect here:" in lines["config.action.reload"]


def test_validate_exits_2_naming_a_refused_key(tmp_path, capsys):
    path = tmp_path / "cloud.json"
    path.write_text(json.dumps(cloud(**{"s3.wan.mode": "true"})))
    assert cli.main(["validate", "--config", str(path)]) == 2
    assert "config key 's3.wan.mode': S3 Transfer Acceleration is not supported" in capsys.readouterr().err


def test_a_provider_integration_means_the_jobs_own_role_and_validate_says_so(tmp_path, capsys):
    # given a Cloud connector with an IAM role integration instead of access keys
    document = cloud(
        **{
            "provider.integration.id": "cspi-4xg7",
            "aws.access.key.id": None,
            "aws.secret.access.key": None,
            "authentication.method": "IAM Roles",
        }
    )
    # when it is parsed and validated
    config = parse_checked_config(document)
    path = tmp_path / "cloud.json"
    path.write_text(json.dumps(document))
    assert cli.main(["validate", "--config", str(path)]) == 0
    # then the value is recorded, and the S3 client uses the default chain (the job's role), from that key
    assert config["provider.integration.id"] == "cspi-4xg7"
    assert config["s3.credentials.provider.class"] == "default"
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["provider.integration.id"].split()[1:] == ["cspi-4xg7"]
    assert lines["s3.credentials.provider.class"].split()[1:] == [
        "com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
        "(from",
        "provider.integration.id)",
    ]
