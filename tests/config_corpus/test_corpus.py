"""Published Confluent S3 sink connector configs (`configs/`, one row each in SOURCES.md), parsed and checked as
`sink-engine validate` does (`validation.load_checked_config` without resolving `${secrets:...}` references, a
Cloud config's Schema Registry from SINK_SCHEMA_REGISTRY_URL); nothing reaches AWS, Kafka or a registry.

Each config validates, or is refused naming a key:
- EXPECTED_REFUSALS: the key Confluent's own connector (or the Connect worker) would also refuse, with the source
  of that refusal;
- THIRD_PARTY_CLASSES: a class of another vendor's plugin, which this engine does not have;
- NOT_YET_ACCEPTED: the key the engine refuses today where Confluent accepts the config. An entry's test fails
  once the config stops failing for that key: then remove the entry (issue 20)."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from sink_engine.config import parse_config
from sink_engine.config.cloud_registry import from_environment
from sink_engine.errors import ConfigError
from sink_engine.validation import check_config, load_checked_config

CORPUS = Path(__file__).parent / "configs"
SOURCES = Path(__file__).parent / "SOURCES.md"
CONFIGS = sorted(path.name for path in CORPUS.glob("*.json"))


@dataclass(frozen=True)
class Refusal:
    key: str
    reason: str


EXPECTED_REFUSALS = {
    "issue561-msk-parquet-avro.json": Refusal(
        "value.converter",
        "io.confluent.connect.avro.avroConverter (lower-case a) is no class: the worker's ConnectorConfig declares "
        "value.converter as Type.CLASS and refuses a class it cannot load (apache/kafka, connect/runtime/.../"
        "ConnectorConfig.java)"),
    "quickstart-confluent-kafka-issue70-avro.json": Refusal(
        "value.converter.schema.registry.url",
        "AvroConverter without schema.registry.url: the task fails with ConfigException 'Missing required "
        "configuration \"schema.registry.url\" which has no default value', as the issue's own trace shows "
        "(aws-quickstart/quickstart-confluent-kafka#70)"),
}

EXPECTED_REFUSALS.update({
    "examples-cloud-etl-s3-avro-legacy.json": Refusal(
        "input.data.format",
        "Confluent Cloud's early S3 sink key data.format: today's S3_SINK requires input.data.format (Confluent "
        "Cloud's S3 sink configuration reference), so an export from today's Cloud carries it"),
    "examples-cloud-etl-s3-bytes-legacy.json": Refusal(
        "input.data.format",
        "Confluent Cloud's early S3 sink key data.format: today's S3_SINK requires input.data.format"),
})

# Classes of another vendor's plugin: a Connect worker loads them only with that plugin installed; this engine has
# no such code to load, so the config is refused naming the key (never run without the class's behaviour).
THIRD_PARTY_CLASSES = {
    "aiven-docs-confluent-s3-bytearray.json": Refusal(
        "s3.credentials.provider.class", "Aiven's AivenAWSCredentialsProvider (Aiven's build of the connector)"),
    "canelmas-custom-field-time-partitioner.json": Refusal(
        "partitioner.class", "a custom partitioner class (com.canelmas...TimeAndFieldBasedPartitioner)"),
}

# Refused today where Confluent accepts the config; each entry's test fails once it is accepted (remove it then).
NOT_YET_ACCEPTED: dict[str, Refusal] = {}


@pytest.fixture(autouse=True)
def local_schema_registry(monkeypatch):
    """A Confluent Cloud config names no Schema Registry (Cloud finds its own); locally the docs have the user
    give it in SINK_SCHEMA_REGISTRY_URL, as here."""
    monkeypatch.setenv("SINK_SCHEMA_REGISTRY_URL", "https://psrc-example.us-east-2.aws.confluent.cloud")


def validate(name: str):
    """What `sink-engine validate --config <file>` checks, without reading secrets."""
    return load_checked_config(str(CORPUS / name), resolve_secrets=False, registry=from_environment(os.environ))


def refusal_today(name: str) -> Refusal | None:
    return NOT_YET_ACCEPTED.get(name) or EXPECTED_REFUSALS.get(name) or THIRD_PARTY_CLASSES.get(name)


def connector_map(name: str) -> dict:
    """The file's flat connector map (the `config` of a wrapped file, with its `name`)."""
    document = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    if isinstance(document.get("config"), dict):
        return {"name": document["name"], **document["config"]}
    return document


@pytest.mark.parametrize("name", [n for n in CONFIGS if refusal_today(n) is None])
def test_published_config_validates(name):
    # given a published config, as published; when validated; then it passes, named as it names itself
    config = validate(name)
    assert config.name == connector_map(name)["name"]


@pytest.mark.parametrize("name", [n for n in CONFIGS if refusal_today(n) is not None])
def test_published_config_is_refused_naming_the_key(name):
    # given a config listed as refused (for now, or as Confluent would); when validated; then the error names the key
    with pytest.raises(ConfigError) as raised:
        validate(name)
    assert raised.value.key == refusal_today(name).key


@pytest.mark.parametrize("name", sorted(EXPECTED_REFUSALS))
def test_expected_refusal_holds_behind_a_key_not_yet_accepted(name):
    # given a config Confluent would refuse, without the key the engine refuses first today
    connector = connector_map(name)
    blocker = NOT_YET_ACCEPTED.get(name)
    if blocker is not None:
        del connector[blocker.key]
    # when parsed and checked; then the refusal names the key Confluent's connector refuses
    with pytest.raises(ConfigError) as raised:
        check_config(parse_config(connector))
    assert raised.value.key == EXPECTED_REFUSALS[name].key


def test_corpus_is_large_and_holds_confluents_quickstart():
    assert len(CONFIGS) >= 30
    assert "quickstart-s3.json" in CONFIGS


def test_tables_and_sources_name_exactly_the_corpus_files():
    # every table entry is a corpus file, and SOURCES.md has one row per file
    assert set(EXPECTED_REFUSALS) <= set(CONFIGS)
    assert set(NOT_YET_ACCEPTED) <= set(CONFIGS) and set(THIRD_PARTY_CLASSES) <= set(CONFIGS)
    rows = re.findall(r"^\| `([^`]+\.json)` \|", SOURCES.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert sorted(rows) == CONFIGS
