"""A dedicated Apache Kafka broker whose client listener advertises a KafkaProxy's port, so every client connection
goes through the proxy (the broker's own traffic to itself uses its internal listener: devtools/kafka_broker.py)."""

from __future__ import annotations

from devtools.faults.kafka_proxy import KafkaProxy
from devtools.kafka_broker import KafkaBroker
from devtools.processes import LOOPBACK, free_port


class ProxiedBroker:
    """Context manager: `proxy` (faults), `bootstrap_servers` (the proxy's address, for every client)."""

    def __init__(self):
        proxy_port = free_port()
        self.broker = KafkaBroker(advertised_port=proxy_port)
        self.proxy = KafkaProxy((LOOPBACK, self.broker.port), port=proxy_port)

    @property
    def bootstrap_servers(self) -> str:
        return self.proxy.address

    def __enter__(self) -> ProxiedBroker:
        self.proxy.start()
        try:
            self.broker.__enter__()
        except BaseException:
            self.proxy.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.broker.stop()
        self.proxy.stop()
