"""MSK IAM's client path on Apache Kafka, as far as it goes without AWS: a broker of this module's with an
OAUTHBEARER listener whose tokens Kafka's unsecured validator checks (devtools/kafka_security.py). A connector
configured for MSK IAM as Java clients are (`AWS_MSK_IAM`, `IAMLoginModule`) makes librdkafka log in with
OAUTHBEARER and the token of the engine's `oauth_cb`, signed by aws-msk-iam-sasl-signer-python with the run's
credentials (moto's placeholders): the broker refuses that token, a SigV4-presigned URL and no JWS, and the run
fails at once with its answer. With the signer's token swapped for an unsigned JWS the same client path reads the
topic: only the token's contents, which MSK alone validates, are not shown (docs/aws-fidelity.md)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from devtools.kafka_broker import KafkaBroker
from devtools.kafka_security import OAuthBearerUnsecured, unsecured_jws
from sink_engine.config import parse_config
from sink_engine.errors import SourceError
from sink_engine.model import TopicPartition
from sink_engine.source.metadata import await_leaders, partition_watermarks
from sink_engine.source.settings import SourceSettings
from tests.conftest import BUCKET, TABLE


@pytest.fixture(scope="module")
def broker(stack):
    """The OAUTHBEARER broker with a topic `iam-orders` of one partition and no records."""
    with KafkaBroker(security=OAuthBearerUnsecured()) as running:
        admin = AdminClient({"bootstrap.servers": running.bootstrap_servers, **running.admin_settings()})
        admin.create_topics([NewTopic("iam-orders", 1, 1)])["iam-orders"].result(30)
        await_leaders(admin, "iam-orders", 30)
        yield running


def msk_iam_source(broker) -> SourceSettings:
    """A connector configured for MSK IAM as Java clients are, over SASL_PLAINTEXT (MSK's port 9098 is SASL_SSL)."""
    return SourceSettings.from_config(
        parse_config(
            {
                "name": "iam-sink",
                "config": {
                    "topics": "iam-orders",
                    "bootstrap.servers": broker.bootstrap_servers,
                    "s3.bucket.name": BUCKET,
                    "s3.region": "us-east-1",
                    "offset.storage.dynamodb.table": TABLE,
                    "flush.size": "5",
                    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                    "sink.kafka.timeout.ms": "20000",
                    "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "AWS_MSK_IAM",
                    "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
                    "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
                },
            }
        )
    )


def test_the_signed_msk_iam_token_reaches_the_broker_in_an_oauthbearer_login(broker, monkeypatch):
    # given the signer's tokens recorded as the engine's oauth_cb asks for them
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

    signed = []
    sign = MSKAuthTokenProvider.generate_auth_token
    monkeypatch.setattr(
        MSKAuthTokenProvider,
        "generate_auth_token",
        lambda region, **kw: signed.append(sign(region, **kw)) or signed[-1],
    )
    # when the run asks Kafka for its partitions, then the broker refused the token, and the run says so at once
    with pytest.raises(SourceError, match="Kafka refused the login: .*SASL authentication error") as failed:
        partition_watermarks(msk_iam_source(broker))
    assert "invalid_token" in str(failed.value)
    # and the token it sent was the signer's, for the run's region
    assert signed and all(token for token, _ in signed)


def test_an_oauthbearer_token_the_broker_accepts_reads_the_topic_through_the_same_client_path(broker, monkeypatch):
    # given the signer's token swapped for an unsigned JWS naming principal `sink`
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

    monkeypatch.setattr(
        MSKAuthTokenProvider,
        "generate_auth_token",
        lambda region, **kw: (lambda token, expiry: (token, expiry * 1000))(*unsecured_jws("sink")),
    )
    # when the run asks Kafka for its partitions, then it logs in with OAUTHBEARER and reads their watermarks
    assert partition_watermarks(msk_iam_source(broker)) == {TopicPartition("iam-orders", 0): (0, 0)}
