"""The bootstrap addresses probed before a Kafka client is made, and the client's log once per message."""

from __future__ import annotations

import logging
import socket

import pytest

from devtools.stack import free_port
from sink_engine.errors import SourceError
from sink_engine.source.reachability import check_bootstrap, client_logger


@pytest.fixture
def listening():
    """An address that accepts connections."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield f"127.0.0.1:{server.getsockname()[1]}"


def test_every_address_refused_or_unresolvable_is_named_with_what_happened():
    refused, unresolved = f"127.0.0.1:{free_port()}", "broker.test-sink.invalid:9092"
    with pytest.raises(SourceError) as raised:
        check_bootstrap([refused, unresolved, "no-port"])
    message = str(raised.value)
    assert message.startswith("Kafka cannot be reached at any address of bootstrap.servers: ")
    assert f"{refused} refused the connection" in message
    assert f"{unresolved} does not resolve" in message
    assert "no-port is not host:port" in message


def test_one_address_that_connects_is_enough(listening):
    check_bootstrap([f"127.0.0.1:{free_port()}", listening])  # no error: the client finds the cluster through it


def test_a_client_message_is_logged_once_whatever_its_retry_took(caplog):
    # given a client's logger, and the same refusal reported by three clients after different waits
    logger = client_logger(f"test-{free_port()}")
    with caplog.at_level(logging.INFO, logger=logger.name):
        for after in (0, 12, 130):
            logger.error(
                "%s [%s] %s",
                "FAIL",
                f"rdkafka#consumer-{after}",
                f"127.0.0.1:1/bootstrap: Connect failed: Connection refused (after {after}ms in state CONNECT)",
            )
        logger.error("%s [%s] %s", "FAIL", "rdkafka#consumer-1", "127.0.0.2:1/bootstrap: Connect failed")
    # then the broker that kept refusing shows once, and the other broker once
    assert [("127.0.0.1:1" in r.getMessage(), "127.0.0.2:1" in r.getMessage()) for r in caplog.records] == [
        (True, False),
        (False, True),
    ]
