"""`sink-engine doctor` against the local stack: all green, then with each dependency broken in turn, each named in
its own row and in the verdict, exit 1. (S3 access denied is tests/iam/test_doctor_under_iam.py's; a refused Kafka
login, a topic the ACLs deny and a group they deny are tests/functional/test_scram_tls.py's.)"""

from __future__ import annotations

import json
import logging

import pytest

from devtools.stack import free_port
from sink_engine import events
from sink_engine.cli import main
from tests.conftest import BUCKET, TABLE
from tests.schema_registry_server import SchemaRegistryServer

AVRO_VALUE = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})


@pytest.fixture(scope="module")
def registry():
    with SchemaRegistryServer() as server:
        yield server


@pytest.fixture
def healthy(stack, new_topic, registry, unique) -> dict:
    """A connector whose every dependency is up: its topic (2 partitions), a subject in the registry it reads Avro
    values through, the suite's bucket and offsets table."""
    topic = f"doctor-{unique}"
    new_topic(topic, 2)
    registry.register(f"{topic}-value", AVRO_VALUE)
    return {
        "name": f"doctor-{unique}",
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": topic,
            "bootstrap.servers": stack.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "s3.region": "us-east-1",
            "offset.storage.dynamodb.table": TABLE,
            "flush.size": "100",
            "format.class": "ParquetFormat",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry.url,
            "sink.kafka.timeout.ms": "5000",
        },
    }


def _doctor(document: dict, tmp_path, capsys) -> tuple[int, dict[str, tuple[str, str]], str]:
    """(exit code, check -> (status, message), the verdict line)."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(document))
    code = main(["doctor", "--config", str(path)])
    lines = capsys.readouterr().out.splitlines()
    rows = {}
    for line in lines[:-1]:
        name, status, message = (part.strip() for part in _split(line))
        rows[name] = (status, message)
    return code, rows, lines[-1]


def _split(line: str) -> tuple[str, str, str]:
    """A table row: the check's name, its status and message (columns two spaces apart; names hold single ones)."""
    name, rest = line.split("  ", 1)
    status, message = rest.strip().split("  ", 1)
    return name, status, message


def test_a_healthy_connector_passes_every_check_and_writes_only_its_probe(
    healthy, tmp_path, capsys, caplog, s3, dynamodb
):
    # when the doctor checks a connector whose dependencies are all up
    with caplog.at_level(logging.INFO, logger="sink_engine"):
        code, rows, verdict = _doctor(healthy, tmp_path, capsys)
    # then every check that applies to it passed, and it says so
    assert code == 0, rows
    assert {name for name, (status, _) in rows.items() if status != "ok"} == set()
    assert set(rows) == {
        "config",
        "interpreter",
        "libraries",
        "kafka topics",
        "schema registry (value)",
        "s3 write",
        "s3 incomplete uploads",
        "dynamodb table",
        "dynamodb lease",
        "dynamodb conditional write",
    }
    assert verdict == f"doctor: all {len(rows)} checks passed"
    assert "2 partitions of doctor-" in rows["kafka topics"][1]
    assert "1 subjects" in rows["schema registry (value)"][1]
    # and one DOCTOR_CHECK event per check
    logged = [json.loads(r.getMessage()) for r in caplog.records if events.DOCTOR_CHECK in r.getMessage()]
    assert [(e["check"], e["status"]) for e in logged] == [(name, "ok") for name in rows]
    # and the only thing it wrote is the probe under the topic's prefix; the lease item was not created
    name, topic = healthy["name"], healthy["config"]["topics"]
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"topics/{topic}/")["Contents"]
    assert [o["Key"] for o in listed] == [f"topics/{topic}/_doctor/{name}.probe"]
    assert "Item" not in dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": name}, "sk": {"S": "LEASE"}})


BROKEN = {
    "kafka unreachable": (
        {"bootstrap.servers": "127.0.0.1:{port}", "sink.kafka.timeout.ms": "3000"},
        {
            "kafka topics": "Kafka cannot be reached at any address of bootstrap.servers: "
            "127.0.0.1:{port} refused the connection (127.0.0.1: Connection refused) "
            "(PLAINTEXT)"
        },
    ),
    "topic missing": (
        {"topics": "absent-{unique}"},
        {"kafka topics": "topics not found in Kafka: absent-{unique} (topics)"},
    ),
    "bucket missing": (
        {"s3.bucket.name": "absent-{unique}"},
        {
            "s3 write": "bucket absent-{unique} does not exist (s3.bucket.name)",
            "s3 incomplete uploads": "ListMultipartUploads: NoSuchBucket",
        },
    ),
    "table missing": (
        {"offset.storage.dynamodb.table": "absent-{unique}"},
        {
            "dynamodb table": "table absent-{unique} does not exist (offset.storage.dynamodb.table)",
            "dynamodb lease": "GetItem: ResourceNotFoundException",
            "dynamodb conditional write": "UpdateItem: ResourceNotFoundException",
        },
    ),
    "secret unresolved": (
        {
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": "${secrets:absent-{unique}:login}",
        },
        {
            "secrets": "config key 'value.converter.basic.auth.user.info': secret 'absent-{unique}' "
            "does not exist in AWS Secrets Manager"
        },
    ),
    "schema registry down": (
        {"value.converter.schema.registry.url": "http://127.0.0.1:{port}"},
        {"schema registry (value)": "Schema Registry at http://127.0.0.1:{port} (value.converter.schema.registry.url)"},
    ),
}


@pytest.mark.parametrize("broken", BROKEN, ids=list(BROKEN))
def test_each_broken_dependency_is_named_and_fails_the_doctor(broken, healthy, tmp_path, capsys, unique):
    # given the healthy connector with one dependency broken (a port nothing listens on, a name that does not exist)
    port = free_port()
    overrides, expected = BROKEN[broken]
    fill = lambda text: text.replace("{port}", str(port)).replace("{unique}", unique)  # noqa: E731
    document = {**healthy, "config": {**healthy["config"], **{k: fill(v) for k, v in overrides.items()}}}
    # when the doctor checks it
    code, rows, verdict = _doctor(document, tmp_path, capsys)
    # then it exits 1, and exactly the checks of that dependency failed, each saying what
    assert code == 1
    failed = {name: message for name, (status, message) in rows.items() if status == "FAILED"}
    assert set(failed) == set(expected), failed
    for name, says in expected.items():
        assert fill(says) in failed[name]
    assert verdict == f"doctor: {len(failed)} of {len(rows)} checks failed: {', '.join(failed)}"
    # and every other check still ran and passed
    assert all(status == "ok" for name, (status, _) in rows.items() if name not in failed)


def test_a_resolved_reference_is_shown_and_its_value_used(healthy, tmp_path, capsys, unique):
    # given the registry login in Secrets Manager, referenced from the config
    import boto3

    boto3.client("secretsmanager").create_secret(Name=f"registry-{unique}", SecretString='{"login": "sink:pw"}')
    document = {
        **healthy,
        "config": {
            **healthy["config"],
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": f"${{secrets:registry-{unique}:login}}",
        },
    }
    # when the doctor checks it, then the reference resolved and every check passed
    code, rows, _ = _doctor(document, tmp_path, capsys)
    assert code == 0, rows
    assert rows["secrets"] == (
        "ok",
        f"resolved 1 reference(s): secret 'registry-{unique}' (value.converter.basic.auth.user.info)",
    )


def test_a_config_that_cannot_be_read_is_the_only_finding(tmp_path, capsys):
    code = main(["doctor", "--config", str(tmp_path / "absent.json")])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0].split()[:2] == ["config", "FAILED"] and "option --config: cannot read the connector file" in out[0]
    assert out[1:] == ["doctor: 1 of 1 checks failed: config"]
