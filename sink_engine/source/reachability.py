"""Whether the bootstrap addresses can be reached at all, asked before a Kafka client is made, and the client's own
log kept to one line per distinct message.

A Kafka client given only addresses that refuse connections or do not resolve retries them until its timeout
(`sink.kafka.timeout.ms`, 60 s by default) and logs every attempt, hundreds of lines. `check_bootstrap` resolves each
`bootstrap.servers` address and opens a TCP connection to it, all at once, within PROBE_TIMEOUT_S: when every address
refuses or does not resolve it raises SourceError naming each address and what happened to it; when one connects, or
one does not answer (a firewall that drops packets: only a timeout can tell), the client goes on with its own timeout.
A connection that opens says nothing of TLS or SASL: the client finds those out itself (its errors reach the caller
through `ClientErrors`).
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, wait

from confluent_kafka import KafkaError

from sink_engine.errors import SourceError

PROBE_TIMEOUT_S = 3.0
REPEAT_AFTER_S = 600.0  # a client log message seen again after this long is logged again
CONNECTED, REFUSED, UNRESOLVED, SILENT = "connected", "refused", "unresolved", "silent"


def check_bootstrap(addresses: Iterable[str], timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """SourceError when no address connects and none is merely silent (see the module docstring)."""
    addresses = list(addresses)
    with ThreadPoolExecutor(max_workers=len(addresses)) as pool:
        futures = {address: pool.submit(probe, address, timeout_s) for address in addresses}
        wait(futures.values(), timeout=timeout_s + 1)
        outcomes = {
            a: f.result() if f.done() else (SILENT, f"no answer within {timeout_s:g}s") for a, f in futures.items()
        }
        pool.shutdown(wait=False, cancel_futures=True)
    if any(kind in (CONNECTED, SILENT) for kind, _ in outcomes.values()):
        return
    raise SourceError(
        "Kafka cannot be reached at any address of bootstrap.servers: "
        + "; ".join(f"{address} {how}" for address, (_, how) in outcomes.items())
    )


def probe(address: str, timeout_s: float) -> tuple[str, str]:
    """(outcome, how) of resolving `address` (host:port) and connecting to its first IP address that answers."""
    host, _, port = address.strip().rpartition(":")
    host = host.strip("[]")  # an IPv6 literal: [::1]:9092
    if not host or not port.isdigit():
        return UNRESOLVED, "is not host:port"
    try:
        found = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return UNRESOLVED, f"does not resolve ({e.strerror})"
    outcome = (REFUSED, "refused the connection")
    for family, kind, proto, _, ip in found:
        with socket.socket(family, kind, proto) as connection:
            connection.settimeout(timeout_s)
            try:
                connection.connect(ip)
                return CONNECTED, f"connected to {ip[0]}"
            except TimeoutError:
                outcome = (SILENT, f"no answer from {ip[0]} within {timeout_s:g}s")
            except OSError as e:
                if outcome[0] != SILENT:
                    outcome = (REFUSED, f"refused the connection ({ip[0]}: {e.strerror})")
    return outcome


class ClientErrors:
    """A Kafka client's `error_cb`: the distinct errors it reported about its brokers (a refused connection, a name
    that does not resolve, a failed TLS handshake or SASL authentication), without the summary librdkafka adds once
    all of them are down."""

    def __init__(self) -> None:
        self._seen: dict[str, None] = {}
        self.refused_login: str | None = None  # the last failed SASL authentication: retrying will not help

    def __call__(self, error: KafkaError) -> None:
        if error.code() != KafkaError._ALL_BROKERS_DOWN:
            self._seen[_without_durations(error.str())] = None
        if error.code() == KafkaError._AUTHENTICATION:
            self.refused_login = _without_durations(error.str())

    def last(self, count: int = 3) -> list[str]:
        return list(self._seen)[-count:]


class _OncePerMessage(logging.Filter):
    """Lets each distinct message of a client's log through once per REPEAT_AFTER_S (its durations aside: a broker
    that keeps refusing is logged once, not at every reconnect; one that fails again later is logged again)."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        message = _without_durations(record.getMessage())
        if record.created - self._seen.get(message, -REPEAT_AFTER_S) < REPEAT_AFTER_S:
            return False
        self._seen[message] = record.created
        return True


def client_logger(name: str) -> logging.Logger:
    """The logger a Kafka client logs through (confluent-kafka's `logger` setting), letting each message through
    once per REPEAT_AFTER_S in the process."""
    logger = logging.getLogger(f"sink_engine.kafka_client.{name}")
    if not logger.filters:
        logger.addFilter(_OncePerMessage())
    return logger


def _without_durations(text: str) -> str:
    """The message without what changes from one retry, or one client, to the next."""
    return re.sub(r"rdkafka#(consumer|producer)-\d+", r"rdkafka#\1", re.sub(r" \(after \d+ms[^)]*\)", "", text))
