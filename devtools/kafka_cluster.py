"""A three-broker Apache Kafka cluster in KRaft mode for broker-fault tests (tests/faults/test_broker_faults.py):
three controllers in one quorum and three brokers, each its own JVM on loopback (devtools/kafka_broker.py nodes).

Controllers and brokers are separate processes, as on MSK, whose KRaft controllers are nodes of their own that
MSK runs beside the brokers ("KRaft mode", MSK Developer Guide): a controller restarted is then a controller
failover alone, with every broker serving, and a broker killed leaves the quorum whole. Three voters keep a
majority through one controller down. The brokers' replication settings are MSK's defaults for a cluster in three
Availability Zones ("Default Amazon MSK configuration"); everything else is Kafka's own default, among them
`broker.session.timeout.ms` (9 s), after which the controllers fence a broker that stopped heartbeating and move its
leaders: a SIGKILLed broker's partitions have no leader for that long."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

from confluent_kafka.admin import AdminClient

from devtools.kafka_broker import KafkaBroker, Quorum
from devtools.producer import create_topic

CONTROLLERS = (1, 2, 3)
BROKERS = (101, 102, 103)
# MSK's defaults for three Availability Zones: three replicas, writes acknowledged by two (acks=all)
REPLICATION = {
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
}


class KafkaCluster:
    """Context manager: `bootstrap_servers` names the three brokers; `broker(id)`, `leaders(topic)` and
    `active_controller()` find the node a fault is aimed at; `heal()` starts again every node a test stopped."""

    def __init__(self, line: str | None = None):
        quorum = Quorum.of(list(CONTROLLERS))
        self.controllers = [KafkaBroker(line, node_id=n, roles="controller", quorum=quorum) for n in CONTROLLERS]
        self.brokers = [
            KafkaBroker(line, node_id=n, roles="broker", quorum=quorum, settings=REPLICATION) for n in BROKERS
        ]

    @property
    def nodes(self) -> list[KafkaBroker]:
        return [*self.controllers, *self.brokers]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(broker.bootstrap_servers for broker in self.brokers)

    def broker(self, node_id: int) -> KafkaBroker:
        return next(broker for broker in self.brokers if broker.node_id == node_id)

    def start(self) -> KafkaCluster:
        """Format the six nodes side by side (each format is a JVM of its own), spawn them, wait for them."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(KafkaBroker.format, self.nodes))
        for node in self.nodes:
            node.launch()
        self.wait_ready()
        return self

    def wait_ready(self, timeout_s: float = 120) -> None:
        """Every node up, every broker registered and unfenced, and a quorum leader known to each controller."""
        deadline = time.monotonic() + timeout_s
        for node in self.nodes:
            node.wait_ready(max(1.0, deadline - time.monotonic()))
        while not all(quorum_leader(controller) for controller in self.controllers):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the controllers know no quorum leader after {timeout_s:g}s")
            time.sleep(0.1)

    def heal(self) -> None:
        """Launch again every node that a test killed or shut down, and wait until the cluster is whole."""
        for node in self.nodes:
            if not node.running:
                node.launch()
        self.wait_ready()

    def create_topic(self, topic: str, partitions: int) -> None:
        """A topic of three replicas and `min.insync.replicas` 2 (MSK's recommendation), its leaders known."""
        create_topic(self.bootstrap_servers, topic, partitions, {"min.insync.replicas": "2"}, replicas=3)

    def leaders(self, topic: str, timeout_s: float = 10) -> dict[int, int]:
        """Partition -> node id of its leader, from a broker's metadata (-1: none)."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        found = admin.list_topics(topic=topic, timeout=timeout_s).topics[topic]
        return {p: meta.leader for p, meta in sorted(found.partitions.items())}

    def active_controller(self, timeout_s: float = 30) -> KafkaBroker:
        """The quorum's leader, as the running controllers' newest `quorum-state` names it, once that is a running
        controller (after a leader stopped, until the others elected another)."""
        deadline = time.monotonic() + timeout_s
        while True:
            running = {c.node_id: c for c in self.controllers if c.running}
            known = [view for view in (quorum_leader(c) for c in running.values()) if view is not None]
            leader = max(known, key=lambda view: view[1])[0] if known else None
            if leader in running:
                return running[leader]
            if time.monotonic() > deadline:
                raise TimeoutError(f"no quorum leader within {timeout_s:g}s")
            time.sleep(0.1)

    def stop(self) -> None:
        """Brokers first: a broker's controlled shutdown asks the controllers, without whom it waits out its
        timeout."""
        for node in [*self.brokers, *self.controllers]:
            node.stop()

    def __enter__(self) -> KafkaCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def quorum_leader(controller: KafkaBroker) -> tuple[int, int] | None:
    """A started controller's view of the quorum, from the `quorum-state` file of its metadata log: (leader id,
    leader epoch), None while it knows no leader."""
    assert controller.folder is not None and controller.is_controller, "a started controller"
    path = controller.folder / "data" / "__cluster_metadata-0" / "quorum-state"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):  # not written yet, or caught mid-write
        return None
    leader = state.get("leaderId", -1)
    return (leader, state.get("leaderEpoch", -1)) if leader >= 0 else None
