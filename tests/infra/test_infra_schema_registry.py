"""The Schema Registry of Confluent Cloud connector files deployed as exported (AVRO input, no registry named):
the environment's `schema_registry` setting, written into the published file at synthesis, its credentials'
secret granted to the connector's job role; without the setting, synthesis refuses naming the file."""

from __future__ import annotations

import copy
import json

import pytest

from infra.errors import ConnectorSpecError, SettingsError
from infra.job_policy import job_statements
from infra.settings import ENVIRONMENTS_DIR, SchemaRegistrySettings, parse_settings
from sink_engine.validation import parse_checked_config
from tests.infra.iceberg_connector import DEV, NAMES, load_spec, resources, synthesize_with
from tests.infra.test_infra_service import _rendered

URL = "https://psrc-4j1d2.eu-west-1.aws.confluent.cloud"
USER_INFO = "${secrets:schema-registry/dev:user_info}"
REGISTRY = {"url": URL, "user_info": USER_INFO}


def settings_with(registry) -> object:
    """dev.json's settings with this `schema_registry` block (None: without one)."""
    document = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
    if registry is not None:
        document["schema_registry"] = copy.deepcopy(registry)
    return parse_settings("dev", document, "dev.json")


def cloud_document(name: str = "cloud-avro", **config) -> dict:
    """A Confluent Cloud connector file as exported for the dev environment: AVRO values, no registry named."""
    merged = {
        "connector.class": "S3_SINK",
        "topics": "orders",
        "input.data.format": "AVRO",
        "output.data.format": "PARQUET",
        "time.interval": "HOURLY",
        "kafka.api.key": "${secrets:msk/cloud-sink:username}",
        "kafka.api.secret": "${secrets:msk/cloud-sink:password}",
        "bootstrap.servers": "b-1.eventsdev.abc123.c2.kafka.eu-west-1.amazonaws.com:9096",
        "s3.bucket.name": DEV.bucket_name,
        "s3.region": DEV.region,
        "offset.storage.dynamodb.table": DEV.table_name,
        **config,
    }
    return {"name": name, "config": merged}


def test_the_setting_is_read_with_its_credentials_reference():
    assert settings_with(REGISTRY).schema_registry == SchemaRegistrySettings(URL, USER_INFO)
    assert settings_with({"url": URL}).schema_registry == SchemaRegistrySettings(URL, None)
    assert settings_with(None).schema_registry is None


@pytest.mark.parametrize(
    "registry, setting, message",
    [
        ({"user_info": USER_INFO}, "schema_registry.url", "is required"),
        ({"url": "https://key:pw@registry.example"}, "schema_registry.url", "does not match"),
        ({"url": f"{URL},{URL}"}, "schema_registry.url", "does not match"),
        ({"url": URL, "user_info": "SR-KEY:clear-secret"}, "schema_registry.user_info", "in clear text"),
        ({"url": URL, "user_info": "SR-KEY:${secrets:sr:}"}, "schema_registry.user_info", "names no JSON key"),
        ({"url": URL, "password": "x"}, "schema_registry.password", "is not a setting"),
    ],
)
def test_a_malformed_setting_is_named(registry, setting, message):
    with pytest.raises(SettingsError, match=f"setting '{setting}' in dev.json: .*{message}"):
        settings_with(registry)


@pytest.mark.parametrize("source", ["input.data.format", "input.key.format"])
def test_without_the_setting_synthesis_refuses_naming_the_file_and_the_format(tmp_path, source):
    document = cloud_document(**{"input.data.format": "JSON", source: "AVRO"})
    with pytest.raises(
        ConnectorSpecError,
        match=f"connector config dev/cloud-avro.json, key '{source}': .*AVRO is "
        "read through a Confluent Schema Registry.*schema_registry.url",
    ):
        load_spec(tmp_path, document, settings_with(None))


def test_the_published_file_carries_the_environments_registry_and_the_role_may_read_its_secret(tmp_path):
    spec = load_spec(tmp_path, cloud_document(), settings_with(REGISTRY))
    assert {k: v for k, v in spec.document["config"].items() if k.startswith("value.converter.")} == {
        "value.converter.schema.registry.url": URL,
        "value.converter.basic.auth.credentials.source": "USER_INFO",
        "value.converter.basic.auth.user.info": USER_INFO,
    }
    assert spec.config["value.converter"] == "avro" and spec.config["value.converter.schema.registry.url"] == URL
    (read,) = [s for s in job_statements(spec, NAMES) if s["Sid"] == "ReadOwnSecrets"]
    assert f"arn:aws:secretsmanager:{DEV.region}:{DEV.account}:secret:schema-registry/dev-??????" in read["Resource"]


@pytest.mark.parametrize(
    "document",
    [
        cloud_document(**{"value.converter.schema.registry.url": "https://mine.example"}),  # names its own
        cloud_document(**{"input.data.format": "JSON"}),  # no schema'd input
    ],
)
def test_a_file_that_needs_no_registry_from_the_environment_is_published_as_written(tmp_path, document):
    spec = load_spec(tmp_path, document, settings_with(REGISTRY))
    assert spec.document == document


def test_synthesis_publishes_the_registry_for_the_job_to_read(tmp_path):
    # given dev's settings with a schema_registry block and a Cloud AVRO connector file that names no registry
    settings = settings_with(REGISTRY)
    # when the stacks are synthesized
    _, templates = synthesize_with(tmp_path, [cloud_document()], settings)
    # then the config the admin publishes for the job (its --config) reads the environment's registry
    (admin,) = resources(templates["service"], "Custom::SinkConnectors").values()
    state = json.loads(_rendered(admin["Properties"]["State"]))
    (published,) = [c for c in state["connectors"] if c["name"] == "cloud-avro"]
    config = parse_checked_config(published["document"])
    assert config["value.converter.schema.registry.url"] == URL
    assert config["value.converter.basic.auth.user.info"] == USER_INFO
    # and its job role may read the credentials' secret, and only its own
    reads = [
        s
        for policy in resources(templates["service"], "AWS::IAM::Policy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Sid") == "ReadOwnSecrets"
    ]
    registry_secret = f"arn:aws:secretsmanager:{settings.region}:{settings.account}:secret:schema-registry/dev-??????"
    granted = [
        s for s in reads if registry_secret in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])
    ]
    assert len(granted) == 1
