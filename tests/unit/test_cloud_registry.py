"""The Schema Registry of a Confluent Cloud config whose file names none: taken from SINK_SCHEMA_REGISTRY_URL
(and SINK_SCHEMA_REGISTRY_USER_INFO) by the CLI, from the caller's RegistryDefault by parse_config; without
one, a schema'd input format is a ConfigError naming it and saying where a registry can be given."""

from __future__ import annotations

import json

import pytest

from sink_engine import cli
from sink_engine.config import parse_config
from sink_engine.config.cloud_registry import RegistryDefault, from_environment
from sink_engine.errors import ConfigError
from sink_engine.validation import parse_checked_config

CLOUD = {
    "name": "cloud-sink",
    "connector.class": "S3_SINK",
    "input.data.format": "JSON",
    "output.data.format": "PARQUET",
    "s3.bucket.name": "lake",
    "time.interval": "HOURLY",
    "topics": "orders",
    "bootstrap.servers": "b-1.example:9096",
}
REGISTRY = RegistryDefault("https://psrc-1.eu-west-1.aws.confluent.cloud", "SR-KEY:sr-secret")


def cloud(**changes) -> dict:
    return {**CLOUD, **{k.replace("_", "."): v for k, v in changes.items()}}


@pytest.mark.parametrize(
    "source, fmt",
    [
        ("input.data.format", "AVRO"),
        ("input.data.format", "protobuf"),
        ("input.data.format", "JSON_SR"),
        ("input.key.format", "AVRO"),
    ],
)
def test_a_schemad_input_without_a_registry_names_the_format_and_where_to_give_one(source, fmt):
    with pytest.raises(ConfigError) as raised:
        parse_config(cloud(**{source: fmt}))
    assert raised.value.key == source
    for where in ("schema.registry.url", "SINK_SCHEMA_REGISTRY_URL", "schema_registry.url"):
        assert where in str(raised.value)


@pytest.mark.parametrize("fmt", ["JSON", "STRING", "BYTES"])
def test_inputs_without_a_schema_need_no_registry(fmt):
    config = parse_checked_config(cloud(input_data_format=fmt, input_key_format=fmt))
    assert config["value.converter.schema.registry.url"] is None


@pytest.mark.parametrize("role, source", [("value", "input.data.format"), ("key", "input.key.format")])
def test_the_given_registry_serves_a_cloud_config_that_names_none(role, source):
    config = parse_config(cloud(**{source: "AVRO"}), REGISTRY)
    prefix = f"{role}.converter."
    assert config[f"{role}.converter"] == "avro"
    assert config[f"{prefix}schema.registry.url"] == REGISTRY.url
    assert config[f"{prefix}basic.auth.credentials.source"] == "user_info"
    assert config[f"{prefix}basic.auth.user.info"] == "SR-KEY:sr-secret"
    origins = {key: origin for key, _, origin in config.effective()}
    assert origins[f"{prefix}schema.registry.url"] == "from SINK_SCHEMA_REGISTRY_URL"
    assert origins[f"{prefix}basic.auth.user.info"] == "from SINK_SCHEMA_REGISTRY_USER_INFO"


def test_a_registry_named_in_the_file_wins_with_its_own_credentials():
    mine = {"value.converter.schema.registry.url": "http://mine:8081"}
    config = parse_config(cloud(input_data_format="AVRO", **mine), REGISTRY)
    assert config["value.converter.schema.registry.url"] == "http://mine:8081"
    assert config["value.converter.basic.auth.user.info"] is None
    assert config["value.converter.basic.auth.credentials.source"] == "url"


def test_a_self_managed_config_never_takes_the_given_registry():
    raw = {
        "name": "c",
        "topics": "t",
        "bootstrap.servers": "b:9092",
        "s3.bucket.name": "lake",
        "flush.size": 1,
        "format.class": "ParquetFormat",
        "value.converter": "AvroConverter",
    }
    config = parse_config(raw, REGISTRY)
    assert config["value.converter.schema.registry.url"] is None
    with pytest.raises(ConfigError) as raised:
        parse_checked_config(raw)
    assert raised.value.key == "value.converter.schema.registry.url"


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({}, None),
        ({"SINK_SCHEMA_REGISTRY_URL": " "}, None),
        ({"SINK_SCHEMA_REGISTRY_USER_INFO": "a:b"}, None),
        ({"SINK_SCHEMA_REGISTRY_URL": "http://r:8081"}, RegistryDefault("http://r:8081")),
        (
            {"SINK_SCHEMA_REGISTRY_URL": "http://r:8081", "SINK_SCHEMA_REGISTRY_USER_INFO": "a:b"},
            RegistryDefault("http://r:8081", "a:b"),
        ),
    ],
)
def test_the_environment_gives_the_registry(environ, expected):
    assert from_environment(environ) == expected


def test_user_info_without_a_colon_is_an_error_naming_the_variable():
    with pytest.raises(ConfigError) as raised:
        from_environment({"SINK_SCHEMA_REGISTRY_URL": "http://r:8081", "SINK_SCHEMA_REGISTRY_USER_INFO": "key-only"})
    assert raised.value.key == "SINK_SCHEMA_REGISTRY_USER_INFO"


def test_validate_shows_the_registry_from_the_environment_and_masks_its_password(tmp_path, capsys, monkeypatch):
    path = tmp_path / "cloud.json"
    path.write_text(json.dumps(cloud(input_data_format="AVRO")))
    monkeypatch.setenv("SINK_SCHEMA_REGISTRY_URL", "https://registry.example")
    monkeypatch.setenv("SINK_SCHEMA_REGISTRY_USER_INFO", "SR-KEY:sr-secret")
    assert cli.main(["validate", "--config", str(path)]) == 0
    lines = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    assert lines["value.converter.schema.registry.url"] == [
        "https://registry.example",
        "(from",
        "SINK_SCHEMA_REGISTRY_URL)",
    ]
    assert lines["value.converter.basic.auth.user.info"] == [
        "SR-KEY:********",
        "(from",
        "SINK_SCHEMA_REGISTRY_USER_INFO)",
    ]


def test_validate_without_a_registry_exits_2_naming_input_data_format(tmp_path, capsys, monkeypatch):
    path = tmp_path / "cloud.json"
    path.write_text(json.dumps(cloud(input_data_format="AVRO")))
    monkeypatch.delenv("SINK_SCHEMA_REGISTRY_URL", raising=False)
    assert cli.main(["validate", "--config", str(path)]) == 2
    assert "config key 'input.data.format': AVRO is read through a Confluent Schema Registry" in capsys.readouterr().err
