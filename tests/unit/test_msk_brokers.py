"""A deployed job's brokers from the environment's MSK cluster (sink_engine/source/msk_brokers.py): GetBootstrapBrokers
answered by botocore's Stubber, since moto has no get_bootstrap_brokers (docs/aws-fidelity.md)."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from sink_engine.config import WorkerSettings, parse_config
from sink_engine.errors import AwsCallError, ConfigError
from sink_engine.source.msk_brokers import with_cluster_brokers
from sink_engine.validation import check_config
from tests.builders import connector_keys

ARN = "arn:aws:kafka:eu-west-1:111111111111:cluster/events-dev/0c3e5b2a-1d4f-4a8e-9b6c-7f0e2d1a3b4c-2"
ANSWER = {
    "BootstrapBrokerString": "b-1.events:9092,b-2.events:9092",
    "BootstrapBrokerStringTls": "b-1.events:9094,b-2.events:9094",
    "BootstrapBrokerStringSaslScram": "b-1.events:9096,b-2.events:9096",
    "BootstrapBrokerStringSaslIam": "b-1.events:9098,b-2.events:9098",
}
MSK_IAM = {
    "consumer.override.security.protocol": "SASL_SSL",
    "consumer.override.sasl.mechanism": "AWS_MSK_IAM",
    "consumer.override.sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
    "consumer.override.sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
}
SCRAM = {
    "consumer.override.security.protocol": "SASL_SSL",
    "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
    "consumer.override.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="u" password="${secrets:msk:password}";',
}


def deployed(overrides: dict):
    """A published connector file (no bootstrap.servers) parsed as a deployed job parses it."""
    keys = connector_keys({"bootstrap.servers": None, **overrides})
    return check_config(parse_config(keys, worker=WorkerSettings(cluster_arn=ARN)))


class Msk:
    """A boto3 MSK client whose answers are stubbed, and the regions it was asked for."""

    def __init__(self):
        self.client = boto3.client("kafka", region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s")
        self.stubber = Stubber(self.client)
        self.regions: list[str] = []

    def __call__(self, region: str):
        self.regions.append(region)
        return self.client


@pytest.fixture
def msk():
    found = Msk()
    with found.stubber:
        yield found
    found.stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    "overrides, expected",
    [
        (MSK_IAM, ("b-1.events:9098", "b-2.events:9098")),
        (SCRAM, ("b-1.events:9096", "b-2.events:9096")),
        ({"consumer.override.security.protocol": "SSL"}, ("b-1.events:9094", "b-2.events:9094")),
        ({}, ("b-1.events:9092", "b-2.events:9092")),
    ],
)
def test_the_job_takes_the_brokers_of_the_listener_its_authentication_speaks(msk, overrides, expected):
    # given a published file without brokers, deployed with the environment's cluster
    msk.stubber.add_response("get_bootstrap_brokers", ANSWER, {"ClusterArn": ARN})
    # when the job resolves its brokers; then it asked MSK in the cluster's region and took its listener's
    config = with_cluster_brokers(deployed(overrides), msk)
    assert config["bootstrap.servers"] == expected
    assert msk.regions == ["eu-west-1"]


def test_a_config_that_names_its_brokers_asks_nothing(msk):
    # given brokers in the connector file (the Stubber holds no answer: a call would fail)
    config = check_config(
        parse_config(connector_keys({"bootstrap.servers": "own:9092"}), worker=WorkerSettings(cluster_arn=ARN))
    )
    assert with_cluster_brokers(config, msk)["bootstrap.servers"] == ("own:9092",)
    assert msk.regions == []


def test_a_listener_the_cluster_does_not_have_names_bootstrap_servers(msk):
    msk.stubber.add_response(
        "get_bootstrap_brokers",
        {"BootstrapBrokerStringSaslIam": ANSWER["BootstrapBrokerStringSaslIam"]},
        {"ClusterArn": ARN},
    )
    with pytest.raises(ConfigError) as raised:
        with_cluster_brokers(deployed(SCRAM), msk)
    assert raised.value.key == "bootstrap.servers"
    assert "has no BootstrapBrokerStringSaslScram" in str(raised.value)


def test_a_denied_call_names_the_operation(msk):
    msk.stubber.add_client_error(
        "get_bootstrap_brokers",
        "AccessDeniedException",
        "not authorized: kafka:GetBootstrapBrokers",
        403,
        expected_params={"ClusterArn": ARN},
    )
    with pytest.raises(AwsCallError, match="GetBootstrapBrokers failed: AccessDeniedException"):
        with_cluster_brokers(deployed(MSK_IAM), msk)


def test_iceberg_maintenance_asks_msk_only_to_list_the_topics_a_regex_matches(msk, monkeypatch):
    """`iceberg maintain` reads Kafka only for topics.regex (the topics that match now); with named topics its
    deployed job asks MSK for nothing (sink_engine/target/iceberg_tables/cli.py connector_tables)."""
    from sink_engine.model import TopicPartition
    from sink_engine.target.iceberg_tables import cli as iceberg_cli
    from sink_engine.target.iceberg_tables.settings import IcebergSettings

    monkeypatch.setattr(iceberg_cli, "kafka_client", msk)
    asked = []
    monkeypatch.setattr(
        iceberg_cli,
        "partition_watermarks",
        lambda source: asked.append(source.bootstrap_servers) or {TopicPartition("orders", 0): (0, 1)},
    )
    iceberg = {
        "format.class": "IcebergFormat",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": "sqlite://",
        "iceberg.tables": "lake.${topic}",
        "iceberg.catalog.warehouse": "s3://lake/warehouse",
    }
    named = deployed({**iceberg, "topics": "orders"})
    assert iceberg_cli.connector_tables(named, IcebergSettings.from_config(named), None) == ["lake.orders"]
    assert asked == [] and msk.regions == []

    matched = deployed({**iceberg, "topics": None, "topics.regex": "ord.*"})
    msk.stubber.add_response("get_bootstrap_brokers", ANSWER, {"ClusterArn": ARN})
    assert iceberg_cli.connector_tables(matched, IcebergSettings.from_config(matched), None) == ["lake.orders"]
    assert asked == [("b-1.events:9092", "b-2.events:9092")] and msk.regions == ["eu-west-1"]
