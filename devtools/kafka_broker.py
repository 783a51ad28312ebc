"""One Apache Kafka node in KRaft mode for the test world, on loopback, its log in a temporary folder removed on stop:
by default broker and controller in one JVM, a cluster of its own; or one node of a cluster of several
(devtools/kafka_cluster.py): a broker or a controller of a shared `Quorum`.

`start()` formats the log folder (`kafka.tools.StorageTool format`, the quorum's cluster id) and spawns
`java -cp '<libs>/*' kafka.Kafka server.properties`; `wait_ready()` returns once a broker answers a metadata
request naming itself (a controller: once it listens). `kill()` (SIGKILL) and `shutdown()` (SIGTERM: a broker's
controlled shutdown) end the process and keep the folder, so that `launch()` starts the same node again. Clients
connect to the `CLIENT` listener, which advertises `advertised_port` (a fault proxy's, tests/faults) or its own;
brokers' traffic among themselves (replication, transaction markers) uses the `INTERNAL` listener, never the proxy.
The settings (SETTINGS) are a single broker's: every internal topic with one replica (a cluster passes its own).
What MSK sets differently is in docs/aws-fidelity.md."""

from __future__ import annotations

import base64
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient

from devtools import kafka_lines
from devtools.kafka_security import OAuthBearerUnsecured, ScramTls
from devtools.processes import LOOPBACK, free_port, spawn, stop_process, wait_for_port

SETTINGS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "INTERNAL",
    "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
    # one broker: the internal topics' replicas and in-sync minimum (MSK: 3 and 2), few partitions (quick to create)
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    "log.cleaner.backoff.ms": "500",  # a compacted topic's closed segments are cleaned within a second (default 15 s)
    # as MSK's default configuration ("Default Amazon MSK configuration", MSK Developer Guide): a topic is made by
    # CreateTopics, never by a Metadata request or a produce
    "auto.create.topics.enable": "false",
}
JVM_OPTIONS = [
    "-Xms128m",
    "-Xmx512m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
]
# Warnings and errors only, to the broker's log file: reload4j's format for Kafka 3.x, log4j2's for 4.x.
LOG4J = """log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
LOG4J2 = """status = error
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = STDERR
"""


def cluster_id() -> str:
    """A new cluster id as Kafka writes one (`Uuid.toString`: URL-safe base64 of 16 bytes, unpadded, no leading -)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass(frozen=True)
class Quorum:
    """A cluster's id and its KRaft voters: the controllers' node ids and controller ports."""

    cluster_id: str
    voters: dict[int, int]

    @classmethod
    def of(cls, node_ids: list[int]) -> Quorum:
        """A new cluster whose voters are `node_ids`, each on a free port."""
        return cls(cluster_id(), {node: free_port() for node in node_ids})

    def setting(self) -> str:
        """`controller.quorum.voters`: `<id>@<host>:<port>,...`."""
        return ",".join(f"{node}@{LOOPBACK}:{port}" for node, port in sorted(self.voters.items()))


class KafkaBroker:
    """Context manager: a running node; `bootstrap_servers` is a broker's client listener's advertised address."""

    def __init__(
        self,
        line: str | None = None,
        advertised_port: int | None = None,
        settings: dict | None = None,
        jvm_options: tuple[str, ...] = (),
        security: ScramTls | OAuthBearerUnsecured | None = None,
        node_id: int = 1,
        roles: str = "broker,controller",
        quorum: Quorum | None = None,
    ):
        """`jvm_options` are added to JVM_OPTIONS (write_class_archive's); `security` makes the client listener
        SASL_SSL with SCRAM users and ACLs, or SASL_PLAINTEXT with OAUTHBEARER (devtools/kafka_security.py).
        `roles`: Kafka's `process.roles`; `quorum`: the cluster this node joins (default: a new one, of this node
        alone, which then must be a controller)."""
        self.line = line or kafka_lines.selected_line()
        self.jvm_options = jvm_options
        self.node_id, self.roles = node_id, roles
        self.quorum = quorum or Quorum.of([node_id])
        self.port, self.internal_port = free_port(), free_port()
        self.controller_port = self.quorum.voters.get(node_id)
        assert (self.controller_port is not None) == self.is_controller, f"node {node_id}: voter iff a controller"
        self.advertised_port = advertised_port or self.port
        self.settings = {**SETTINGS, **(settings or {}), "process.roles": roles, "node.id": str(node_id)}
        if not self.is_broker:  # Kafka refuses a broker listener's setting on a controller-only node
            del self.settings["inter.broker.listener.name"]
        self.security = security
        self.folder: Path | None = None
        self._process: subprocess.Popen | None = None

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles.split(",")

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles.split(",")

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def bootstrap_servers(self) -> str:
        return f"{LOOPBACK}:{self.advertised_port}"

    @property
    def log_file(self) -> Path:
        assert self.folder is not None, "the broker has not started"
        return self.folder / "broker.log"

    def start(self) -> KafkaBroker:
        """Format a fresh log folder and spawn the node (do not wait for it: `wait_ready`)."""
        return self.format().launch()

    def format(self) -> KafkaBroker:
        """Write the node's settings into a fresh log folder and format it with the quorum's cluster id (a JVM run
        of its own, about a second: a cluster formats its nodes side by side)."""
        self.folder = Path(tempfile.mkdtemp(prefix="kafka-broker-"))
        if self.security is not None:
            self.security.write(self.folder)
        properties = self._write_config()
        with open(self.log_file, "ab") as log:
            users = self.security.format_arguments() if self.security else []
            format_ = ["kafka.tools.StorageTool", "format", "-t", self.quorum.cluster_id, "-c", str(properties)]
            formatted = subprocess.run(
                [*self._java(), *format_, *users], stdout=log, stderr=log, stdin=subprocess.DEVNULL
            )
        if formatted.returncode:
            raise RuntimeError(f"Kafka's StorageTool format failed with {formatted.returncode}: {self._log_tail()}")
        return self

    def launch(self) -> KafkaBroker:
        """Spawn the node on its formatted folder: after `format()`, or again after `kill()` or `shutdown()` (a
        restart, its log and metadata kept). Call it from the main thread: the node dies with the thread that
        spawned it (processes.die_with_parent)."""
        assert self.folder is not None and not self.running, "start() first, and stop the running node"
        self._process = spawn(
            [*self._java(), "kafka.Kafka", str(self.folder / "server.properties")], log_path=self.log_file
        )
        return self

    def _java(self) -> list[str]:
        assert self.folder is not None
        libs = kafka_lines.libs_dir(self.line).resolve()  # the class archive holds the class path it was made with
        logging = [
            f"-Dlog4j.configuration=file:{self.folder / 'log4j.properties'}",
            f"-Dlog4j2.configurationFile={self.folder / 'log4j2.properties'}",
        ]
        archive = kafka_lines.class_archive(self.line)
        sharing = [f"-XX:SharedArchiveFile={archive}"] if archive.exists() and not self.jvm_options else []
        return ["java", *JVM_OPTIONS, *self.jvm_options, *sharing, *logging, "-cp", f"{libs}/*"]

    def wait_ready(self, timeout_s: float = 60) -> None:
        """Return once a broker answers metadata naming itself (registered and unfenced), once a controller-only
        node listens; a node that exits or stays silent fails."""
        assert self._process is not None, "start() first"
        deadline = time.monotonic() + timeout_s
        name = f"Kafka {self.line} node {self.node_id} ({self.roles})"
        try:
            if not self.is_broker:
                assert self.controller_port is not None  # a controller is a voter
                wait_for_port(self.controller_port, self._process, name, timeout_s)
                return
            wait_for_port(self.port, self._process, name, timeout_s)
            admin = AdminClient({"bootstrap.servers": f"{LOOPBACK}:{self.port}", **self.admin_settings()})
            while self.node_id not in admin.list_topics(timeout=max(1.0, deadline - time.monotonic())).brokers:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"node {self.node_id} not in the metadata")
                time.sleep(0.05)
        except Exception as error:
            raise RuntimeError(f"{name} did not become ready: {error}\n{self._log_tail()}") from None

    def admin_settings(self) -> dict:
        """Client settings of the broker's admin: none on a plaintext broker, the admin's SCRAM login on a secured
        one."""
        return self.security.client_settings(self.security.admin) if self.security else {}

    def kill(self) -> None:
        """SIGKILL the node (a crash: no controlled shutdown), keeping its folder for `launch()`."""
        if self._process is not None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait()
            self._process = None

    def shutdown(self, timeout_s: float = 10) -> None:
        """Stop the node with SIGTERM (a broker's controlled shutdown moves its leaders first; SIGKILL after
        `timeout_s`), keeping its folder."""
        if self._process is not None:
            stop_process(self._process, timeout_s)
            self._process = None

    def stop(self) -> None:
        self.shutdown()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> KafkaBroker:
        try:
            self.start().wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _write_config(self) -> Path:
        assert self.folder is not None
        secured = self.security.broker_settings() if self.security else {}
        entries = {**self.settings, **secured, **self._listeners()}.items()
        path = self.folder / "server.properties"
        path.write_text("".join(f"{key}={_escaped(value)}\n" for key, value in entries))
        (self.folder / "log4j.properties").write_text(LOG4J)
        (self.folder / "log4j2.properties").write_text(LOG4J2)
        return path

    def _listeners(self) -> dict[str, str]:
        """A broker's CLIENT and INTERNAL listeners (both advertised), a controller's CONTROLLER listener."""
        assert self.folder is not None
        listeners, advertised = [], []
        if self.is_broker:
            listeners += [f"CLIENT://{LOOPBACK}:{self.port}", f"INTERNAL://{LOOPBACK}:{self.internal_port}"]
            advertised += [f"CLIENT://{LOOPBACK}:{self.advertised_port}", listeners[1]]
        if self.is_controller:
            listeners.append(f"CONTROLLER://{LOOPBACK}:{self.controller_port}")
        settings = {
            "listeners": ",".join(listeners),
            "controller.quorum.voters": self.quorum.setting(),
            "log.dirs": str(self.folder / "data"),
        }
        if advertised:
            settings["advertised.listeners"] = ",".join(advertised)
        return settings

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no broker log)"


def _escaped(value: str) -> str:
    """A properties value on one line: a PEM value's newlines as the properties format's `\\n` escapes."""
    return value.replace("\n", "\\n")


def write_class_archive(line: str) -> None:
    """Start a broker of `line` once and stop it, the JVM writing the classes it loaded to `class_archive(line)` as it
    exits (Java's dynamic class data sharing, `-XX:ArchiveClassesAtExit`): brokers started with the archive map
    those classes in instead of loading them, which takes about 40% less CPU to a broker that answers (measured:
    3.8 s without, 2.2 s with). A JVM that cannot use the archive (another Java) ignores it."""
    target = kafka_lines.class_archive(line)
    partial = target.with_suffix(".partial")
    broker = KafkaBroker(line, jvm_options=(f"-XX:ArchiveClassesAtExit={partial}",))
    try:
        broker.start().wait_ready()
        assert broker._process is not None
        broker._process.terminate()  # the JVM writes the archive as it exits, after the broker's shutdown
        broker._process.wait(timeout=120)
        if not partial.exists():
            raise RuntimeError(f"the broker exited without writing {partial}: {broker._log_tail()}")
        partial.replace(target)
    finally:
        broker.stop()
