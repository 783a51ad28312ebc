"""A connector file as published (no `bootstrap.servers`) runs with the Kafka Connect worker's settings: a worker
properties file (`--worker`) or the CONNECT_* environment variables (docs/configuration/worker.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from devtools.producer import create_topic, produce_events
from tests.conftest import BUCKET, TABLE


def test_a_published_file_runs_with_the_workers_brokers(stack, unique, tmp_path):
    # given a topic with 400 records and a connector file that names no brokers, as Connect users hold it
    topic = f"worker-{unique}"
    create_topic(stack.bootstrap_servers, topic, 2)
    produce_events(stack.bootstrap_servers, topic, 400, 2)
    config = tmp_path / "connector.json"
    config.write_text(
        json.dumps(
            {
                "name": f"worker-{unique}",
                "config": {
                    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
                    "topics": topic,
                    "s3.bucket.name": BUCKET,
                    "s3.region": "us-east-1",
                    "flush.size": "100",
                    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                    "offset.storage.dynamodb.table": TABLE,
                },
            }
        )
    )
    worker = tmp_path / "connect-distributed.properties"
    worker.write_text(
        f"bootstrap.servers={stack.bootstrap_servers}\ngroup.id=connect-cluster\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
        "value.converter.schemas.enable=false\n"
    )
    environment = {key: value for key, value in {**os.environ, **stack.env}.items() if not key.startswith("CONNECT_")}
    # when it runs with the worker file
    done = subprocess.run(
        [sys.executable, "-m", "sink_engine", "run", "--config", str(config), "--worker", str(worker)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    # then it read the broker the worker names and wrote every record
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wrote s3://") == 4 and "400 records" in done.stdout
    # and status, with the brokers in CONNECT_BOOTSTRAP_SERVERS instead, sees both partitions committed
    status = subprocess.run(
        [sys.executable, "-m", "sink_engine", "status", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment, "CONNECT_BOOTSTRAP_SERVERS": stack.bootstrap_servers},
    )
    assert status.returncode == 0, status.stderr
    rows = [line.split() for line in status.stdout.splitlines() if line.startswith(topic)]
    assert [(row[1], row[2], row[3]) for row in rows] == [("200", "200", "0"), ("200", "200", "0")]
