"""A Kafka Connect worker in standalone mode (connect-runtime from Maven Central, devtools/debezium_dist.py) running
one connector against the local stack's broker: Debezium's Postgres connector for the CDC end-to-end test, a peer
sink connector for `make bench-peers` (its plugins in another folder, `plugin_path`).
Converters are the worker's JsonConverter with schemas (Connect's defaults, as an MSK Connect worker configuration
that names JsonConverter); offsets in a file, flushed every second; topics created by Connect
(`topic.creation.default.*` in the connector's settings). Its log goes to `connect.log` in its folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from devtools import debezium_dist
from devtools.kafka_broker import LOG4J
from devtools.processes import LOOPBACK, free_port, spawn, stop_process, wait_for_port

WORKER = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.flush.interval.ms": "1000",
}


class ConnectWorker:
    """`with ConnectWorker(bootstrap, connector) as worker:` the worker with `connector` (its properties, `name`
    included) running; `worker.state()` is the connector's and its task's state from the REST API. `plugin_path`: the
    folder of plugins (Debezium's by default), `worker`: settings over WORKER, `env`: the JVM's environment, `heap`
    its -Xmx. With `connector` None the worker starts alone (its plugins loaded) and `submit(connector)` starts one
    later."""

    def __init__(
        self,
        bootstrap_servers: str,
        connector: dict[str, str] | None,
        plugin_path: Path | None = None,
        worker: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        heap: str = "512m",
    ):
        self.bootstrap_servers, self.connector = bootstrap_servers, connector
        self.plugin_path, self.worker, self.env, self.heap = plugin_path, worker or {}, env, heap
        self.port = free_port()
        self.folder: Path | None = None
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> ConnectWorker:
        try:
            self.start()
            if self.connector is not None:
                self.wait_running()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        root = debezium_dist.installed()
        self.folder = Path(tempfile.mkdtemp(prefix="kafka-connect-"))
        worker = {
            **WORKER,
            "bootstrap.servers": self.bootstrap_servers,
            "listeners": f"http://{LOOPBACK}:{self.port}",
            "offset.storage.file.filename": str(self.folder / "offsets"),
            "plugin.path": str(self.plugin_path or root / "plugins"),
            **self.worker,
        }
        _write_properties(self.folder / "worker.properties", worker)
        properties = [str(self.folder / "worker.properties")]
        if self.connector is not None:
            _write_properties(self.folder / "connector.properties", self.connector)
            properties.append(str(self.folder / "connector.properties"))
        (self.folder / "log4j.properties").write_text(LOG4J.replace("WARN", "INFO"))
        java = ["java", f"-Xmx{self.heap}", f"-Dlog4j.configuration=file:{self.folder / 'log4j.properties'}"]
        java += ["-cp", f"{root / 'connect' / 'libs'}/*", "org.apache.kafka.connect.cli.ConnectStandalone"]
        self._process = process = spawn([*java, *properties], env=self.env, log_path=self.folder / "connect.log")
        wait_for_port(self.port, process, "Kafka Connect", timeout_s=90)

    @property
    def pid(self) -> int:
        """The worker JVM's process id (while it runs)."""
        assert self._process is not None
        return self._process.pid

    def submit(self, connector: dict[str, str], timeout_s: float = 90) -> None:
        """Create `connector` (its properties, `name` included) through the REST API (POST /connectors), once the
        API serves its resources (until then the open port answers 404)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"http://{LOOPBACK}:{self.port}/connectors", timeout=5):  # noqa: S310
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Kafka Connect's REST API is not serving:\n{self.log_tail()}") from None
                time.sleep(0.5)
        self.connector = connector
        body = json.dumps({"name": connector["name"], "config": connector}).encode()
        request = urllib.request.Request(
            f"http://{LOOPBACK}:{self.port}/connectors", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30):  # noqa: S310 (a loopback URL of our own)
            pass

    def state(self) -> tuple[str, list[str]]:
        """(the connector's state, its tasks' states), as GET /connectors/<name>/status gives them."""
        assert self.connector is not None
        url = f"http://{LOOPBACK}:{self.port}/connectors/{self.connector['name']}/status"
        with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 (a loopback URL of our own)
            status = json.load(answer)
        return status["connector"]["state"], [task["state"] for task in status["tasks"]]

    def wait_running(self, timeout_s: float = 120) -> None:
        """Until the connector and its task run; RuntimeError with the log's tail if one fails or time runs out."""
        deadline = time.monotonic() + timeout_s
        state = None
        while time.monotonic() < deadline:
            try:
                state = self.state()
            except OSError:
                state = None
            if state and "FAILED" in (state[0], *state[1]):
                break
            if state and state[0] == "RUNNING" and state[1] and all(s == "RUNNING" for s in state[1]):
                return
            time.sleep(0.5)
        name = self.connector["name"] if self.connector else None
        raise RuntimeError(f"connector {name} is not running ({state}):\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        if self.folder is None:
            return "(no worker log)"
        try:
            return "\n".join((self.folder / "connect.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no worker log)"

    def stop(self) -> None:
        if self._process is not None:
            stop_process(self._process, timeout_s=20)
            self._process = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def _write_properties(path: Path, entries: dict[str, str]) -> None:
    """A Java properties file (the values hold no backslashes or line breaks)."""
    path.write_text("".join(f"{key}={value}\n" for key, value in entries.items()))
