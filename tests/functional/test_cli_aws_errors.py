"""An AWS call that fails outside the engine's own handling is reported as a clear error, not a traceback."""
from __future__ import annotations

import json

from sink_engine.cli import main


def test_a_missing_offsets_table_is_reported_naming_the_call(stack, new_topic, tmp_path, capsys, unique):
    new_topic(f"events-{unique}", 1)
    config = tmp_path / "connector.json"
    config.write_text(json.dumps({"name": f"conn-{unique}", "config": {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": f"events-{unique}", "bootstrap.servers": stack.bootstrap_servers, "s3.bucket.name": "test-lake",
        "flush.size": 10, "format.class": "JsonFormat", "offset.storage.dynamodb.table": f"missing-{unique}"}}))
    assert main(["status", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: AWS call Query failed: ResourceNotFoundException")
    assert "Traceback" not in err
