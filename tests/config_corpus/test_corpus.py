"""Published Confluent S3 sink connector configs (`configs/`, one row each in SOURCES.md), parsed and checked as
`sink-engine validate` does (`validation.load_checked_config` without resolving `${secrets:...}` references, a
Cloud config's Schema Registry from SINK_SCHEMA_REGISTRY_URL); nothing reaches AWS, Kafka or a registry. A connector
config carries no `bootstrap.servers` (a Kafka Connect worker setting): each is checked with the worker's brokers
given in CONNECT_BOOTSTRAP_SERVERS and, again, in a worker properties file (`--worker`).

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
from sink_engine.config.worker import read_worker
from sink_engine.errors import ConfigError, ConfigErrors
from sink_engine.validation import check_config, load_checked_config

CORPUS = Path(__file__).parent / "configs"
SOURCES = Path(__file__).parent / "SOURCES.md"
CONFIGS = sorted(path.name for path in CORPUS.glob("*.json"))


@dataclass(frozen=True)
class Refusal:
    key: str
    reason: str
    # a key the engine refuses as written, before it checks across keys (a redacted bucket name), and a valid
    # stand-in for its value, under which the refusal of `key` shows
    first: tuple[str, str] | None = None


EXPECTED_REFUSALS = {
    "issue561-msk-parquet-avro.json": Refusal(
        "value.converter",
        "io.confluent.connect.avro.avroConverter (lower-case a) is no class: the worker's ConnectorConfig declares "
        "value.converter as Type.CLASS and refuses a class it cannot load (apache/kafka, connect/runtime/.../"
        "ConnectorConfig.java)",
    ),
    "quickstart-confluent-kafka-issue70-avro.json": Refusal(
        "value.converter.schema.registry.url",
        "AvroConverter without schema.registry.url: the task fails with ConfigException 'Missing required "
        "configuration \"schema.registry.url\" which has no default value', as the issue's own trace shows "
        "(aws-quickstart/quickstart-confluent-kafka#70)",
        first=("s3.bucket.name", "xxx-ztest1"),
    ),
}

EXPECTED_REFUSALS.update(
    {
        "seed-000-basic-s3-sink.json": Refusal(
            "partition.duration.ms",
            "TimeBasedPartitioner without partition.duration.ms (nor path.format): storage-common's TimeBasedPartitioner "
            "throws ConfigException 'Partition duration needs to be a positive.' (confluentinc/kafka-connect-storage-common"
            ", partitioner/TimeBasedPartitioner.java, configure); the same page's complete example sets them",
        ),
        "seed-001-confluent-cloud-s3-sink.json": Refusal(
            "s3.bucket.name",
            "the page's placeholders (<my-bucket-name>, <topic-1>, <my-kafka-api-key>, ...) left as values: S3 refuses "
            "the bucket name and Kafka the topic names; with values in their place it validates "
            "(test_seed_cloud_config_validates_once_its_placeholders_are_filled)",
        ),
        "seed-002-confluent-load-s3-sink.json": Refusal(
            "s3.bucket.name",
            'the page lost the key of "confluent-kafka-connect-s3-testing" (s3.bucket.name in Confluent\'s quickstart) '
            "and the class values: Connect refuses the missing s3.bucket.name ('Missing required configuration', "
            "S3SinkConnectorConfig declares it without a default) and an empty storage.class ('Class  could not be "
            "found'); quickstart-s3.json is that config as Confluent ships it",
        ),
        "rahulbats-bytearray-minimal.json": Refusal(
            "s3.bucket.name",
            "the placeholder BUCKET_NAME kept: S3 bucket names are lowercase (General purpose bucket naming rules, "
            "https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html)",
        ),
        "examples-cloud-etl-s3-avro-legacy.json": Refusal(
            "input.data.format",
            "Confluent Cloud's early S3 sink key data.format: today's S3_SINK requires input.data.format (Confluent "
            "Cloud's S3 sink configuration reference), so an export from today's Cloud carries it",
        ),
        "examples-cloud-etl-s3-bytes-legacy.json": Refusal(
            "input.data.format",
            "Confluent Cloud's early S3 sink key data.format: today's S3_SINK requires input.data.format",
        ),
    }
)

# Classes of another vendor's plugin: a Connect worker loads them only with that plugin installed; this engine has
# no such code to load, so the config is refused naming the key (never run without the class's behaviour).
THIRD_PARTY_CLASSES = {
    "aiven-docs-confluent-s3-bytearray.json": Refusal(
        "s3.credentials.provider.class", "Aiven's AivenAWSCredentialsProvider (Aiven's build of the connector)"
    ),
    "canelmas-custom-field-time-partitioner.json": Refusal(
        "partitioner.class", "a custom partitioner class (com.canelmas...TimeAndFieldBasedPartitioner)"
    ),
}

# Refused today where Confluent accepts the config; each entry's test fails once it is accepted (remove it then).
NOT_YET_ACCEPTED: dict[str, Refusal] = {}


BROKERS = "localhost:9092"


@pytest.fixture(autouse=True)
def local_schema_registry(monkeypatch):
    """A Confluent Cloud config names no Schema Registry (Cloud finds its own); locally the docs have the user
    give it in SINK_SCHEMA_REGISTRY_URL, as here."""
    monkeypatch.setenv("SINK_SCHEMA_REGISTRY_URL", "https://psrc-example.us-east-2.aws.confluent.cloud")


@pytest.fixture(params=["environment", "worker file"])
def worker_file(request, monkeypatch, tmp_path) -> str | None:
    """The worker's brokers as a local user gives them: CONNECT_BOOTSTRAP_SERVERS, or a worker properties file
    (its path; the environment then names nothing)."""
    if request.param == "environment":
        monkeypatch.setenv("CONNECT_BOOTSTRAP_SERVERS", BROKERS)
        return None
    monkeypatch.delenv("CONNECT_BOOTSTRAP_SERVERS", raising=False)
    path = tmp_path / "connect-distributed.properties"
    path.write_text(f"bootstrap.servers={BROKERS}\ngroup.id=connect-cluster\noffset.storage.topic=connect-offsets\n")
    return str(path)


def validate(name: str, worker_file: str | None = None):
    """What `sink-engine validate --config <file> [--worker <worker_file>]` checks, without reading secrets."""
    return load_checked_config(
        str(CORPUS / name),
        resolve_secrets=False,
        registry=from_environment(os.environ),
        worker=read_worker(worker_file, os.environ),
    )


def refused_keys(error: ConfigError) -> list[str]:
    return [e.key for e in error.errors] if isinstance(error, ConfigErrors) else [error.key]


def refusal_today(name: str) -> Refusal | None:
    return NOT_YET_ACCEPTED.get(name) or EXPECTED_REFUSALS.get(name) or THIRD_PARTY_CLASSES.get(name)


def connector_map(name: str) -> dict:
    """The file's flat connector map (the `config` of a wrapped file, with its `name`)."""
    document = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    if isinstance(document.get("config"), dict):
        return {"name": document["name"], **document["config"]}
    return document


@pytest.mark.parametrize("name", [n for n in CONFIGS if refusal_today(n) is None])
def test_published_config_validates(name, worker_file):
    # given a published config, as published, and the worker's brokers; when validated; then it passes, named as it
    # names itself, reading the brokers from the worker
    config = validate(name, worker_file)
    assert config.name == connector_map(name)["name"]
    assert config["bootstrap.servers"] == (BROKERS,)


@pytest.mark.parametrize("name", [n for n in CONFIGS if refusal_today(n) is not None])
def test_published_config_is_refused_naming_the_key(name, worker_file):
    # given a config listed as refused (for now, or as Confluent would); when validated; then the errors name the key
    with pytest.raises(ConfigError) as raised:
        validate(name, worker_file)
    refusal = refusal_today(name)
    assert (refusal.first[0] if refusal.first else refusal.key) in refused_keys(raised.value)


def test_no_published_config_carries_bootstrap_servers():
    # the files are as published: the brokers are the worker's
    assert [n for n in CONFIGS if "bootstrap.servers" in connector_map(n)] == []


def test_seed_cloud_config_validates_once_its_placeholders_are_filled(monkeypatch):
    # given the Confluent Cloud page's config with values where its placeholders were
    connector = connector_map("seed-001-confluent-cloud-s3-sink.json")
    filled = {key: value for key, value in connector.items() if "<" not in str(value)}
    filled.update(
        {
            "kafka.api.key": "ABCDEFGHIJKLMNOP",
            "kafka.api.secret": "${secrets:cc/kafka:secret}",
            "aws.access.key.id": "AKIAIOSFODNN7EXAMPLE",
            "aws.secret.access.key": "${secrets:cc/aws:secret}",
            "s3.bucket.name": "my-bucket-name",
            "topics": "topic-1, topic-2",
        }
    )
    monkeypatch.setenv("CONNECT_BOOTSTRAP_SERVERS", BROKERS)
    # when parsed and checked; then it passes
    config = check_config(parse_config(filled, worker=read_worker(None, os.environ)))
    assert config["topics"] == ("topic-1", "topic-2")


@pytest.mark.parametrize("name", sorted(EXPECTED_REFUSALS))
def test_expected_refusal_holds_behind_a_key_not_yet_accepted(name):
    # given a config Confluent would refuse, without the key the engine refuses first today
    connector = connector_map(name)
    blocker = NOT_YET_ACCEPTED.get(name)
    if blocker is not None:
        del connector[blocker.key]
    if EXPECTED_REFUSALS[name].first is not None:
        key, stand_in = EXPECTED_REFUSALS[name].first
        connector[key] = stand_in
    # when parsed and checked; then the refusal names the key Confluent's connector refuses
    with pytest.raises(ConfigError) as raised:
        check_config(parse_config(connector, worker=read_worker(None, {"CONNECT_BOOTSTRAP_SERVERS": BROKERS})))
    assert EXPECTED_REFUSALS[name].key in refused_keys(raised.value)


def test_corpus_is_large_and_holds_confluents_quickstart():
    assert len(CONFIGS) >= 30
    assert "quickstart-s3.json" in CONFIGS


def test_tables_and_sources_name_exactly_the_corpus_files():
    # every table entry is a corpus file, and SOURCES.md has one row per file
    assert set(EXPECTED_REFUSALS) <= set(CONFIGS)
    assert set(NOT_YET_ACCEPTED) <= set(CONFIGS) and set(THIRD_PARTY_CLASSES) <= set(CONFIGS)
    rows = re.findall(r"^\| `([^`]+\.json)` \|", SOURCES.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert sorted(rows) == CONFIGS
