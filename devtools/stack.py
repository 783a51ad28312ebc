"""The embedded local stack: an Apache Kafka broker (KRaft, one node: devtools/kafka_broker.py, its jars installed by
devtools/kafka_dist.py) and moto's server for S3 and DynamoDB, on free loopback ports. Stops everything it started,
also on failure. `KAFKA_VERSION` picks the broker line (3.9, make test's; 4.1, make test-kafka4's).

With `iam_free_requests=N`, moto enforces IAM (its `INITIAL_NO_AUTH_ACTION_COUNT`): the first N requests are
free (enough to create an admin user and its access key), every later one is authorized against the caller's
IAM policies (see docs/aws-fidelity.md for what moto evaluates and what it does not)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import boto3

from devtools.kafka_broker import KafkaBroker
from devtools.processes import LOOPBACK, free_port, spawn, stop_process, wait_for_port

__all__ = ["AWS_ENV", "LOOPBACK", "LocalStack", "free_port"]

AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class LocalStack:
    """Context manager. `env` holds the variables that point AWS SDKs (boto3 via AWS_ENDPOINT_URL) at moto;
    its credentials are moto's placeholders, which an IAM-enforcing stack refuses after the free requests."""

    def __init__(self, iam_free_requests: int | None = None, moto_module: str = "devtools.moto_server"):
        """`moto_module`: the module run as moto's server (`python -m <module> <moto_server arguments>`): this
        package's, or a test's that patches more of moto (tests/iam/emr_lifecycle.py)."""
        self.broker = KafkaBroker()
        self.aws_port = free_port()
        self.iam_free_requests = iam_free_requests
        self.moto_module = moto_module
        self._moto: subprocess.Popen | None = None

    @property
    def enforces_iam(self) -> bool:
        return self.iam_free_requests is not None

    @property
    def bootstrap_servers(self) -> str:
        return self.broker.bootstrap_servers

    @property
    def aws_endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.aws_port}"

    @property
    def env(self) -> dict:
        return {**AWS_ENV, "AWS_ENDPOINT_URL": self.aws_endpoint}

    def start(self) -> LocalStack:
        """moto and the broker start side by side (each takes a second or two); returns once both answer."""
        try:
            root = str(Path(__file__).resolve().parents[1])  # this checkout's devtools, wherever the stack starts
            moto_env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
            if self.enforces_iam:
                moto_env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(self.iam_free_requests)
            # moto's server with its per-item table copies in TransactWriteItems taken out (devtools/moto_server.py)
            command = [sys.executable, "-m", self.moto_module, "-H", LOOPBACK, "-p", str(self.aws_port)]
            self._moto = spawn(command, env=moto_env)
            self.broker.start()
            wait_for_port(self.aws_port, self._moto, "moto server")
            self.broker.wait_ready()
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
        if self._moto is not None:
            stop_process(self._moto)
            self._moto = None
        self.broker.stop()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
