"""`sink-engine run` started from a terminal or a pipe prints the run's own lines: no Spark stage bars and no JVM
start-up notices (NativeCodeLoader, setLogLevel hints) when the engine starts Spark itself."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from devtools.producer import create_topic, produce_events
from tests.conftest import BUCKET, TABLE


def test_a_run_prints_its_own_lines_and_no_spark_noise(stack, unique, tmp_path):
    topic = f"quiet-{unique}"
    create_topic(stack.bootstrap_servers, topic, 2)
    produce_events(stack.bootstrap_servers, topic, 400, 2)
    config = tmp_path / "connector.json"
    config.write_text(json.dumps({"name": f"quiet-{unique}", "config": {
        "topics": topic, "bootstrap.servers": stack.bootstrap_servers, "s3.bucket.name": BUCKET,
        "s3.region": "us-east-1", "flush.size": 100, "format.class": "JsonFormat",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "offset.storage.dynamodb.table": TABLE}}))
    done = subprocess.run([sys.executable, "-m", "sink_engine", "run", "--config", str(config)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **stack.env})
    assert done.returncode == 0, done.stderr
    assert "run finished" in done.stdout and done.stdout.count("wrote s3://") == 4
    for noise in ("NativeCodeLoader", "setLogLevel", "[Stage", "WARN"):
        assert noise not in done.stderr, done.stderr
