"""`sink-engine doctor` for an IcebergFormat connector (SQL catalog, warehouse in moto's S3): the catalog check
replaces the S3 object probes; a namespace that does not exist yet fails it, naming the namespace."""

from __future__ import annotations

import json

from devtools.producer import create_topic
from sink_engine.cli import main
from tests.conftest import BUCKET, TABLE


def _document(stack, unique, catalog_file) -> dict:
    create_topic(stack.bootstrap_servers, f"events-{unique}", 1)
    return {
        "name": f"tables-{unique}",
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": f"events-{unique}",
            "bootstrap.servers": stack.bootstrap_servers,
            "s3.bucket.name": BUCKET,
            "s3.region": "us-east-1",
            "offset.storage.dynamodb.table": TABLE,
            "flush.size": "100",
            "format.class": "IcebergFormat",
            "iceberg.tables": f"lake_{unique}.events",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": f"sqlite:///{catalog_file}",
            "iceberg.catalog.warehouse": f"s3://{BUCKET}/wh-{unique}",
            "iceberg.tables.auto-create-enabled": "true",
            "sink.kafka.timeout.ms": "5000",
        },
    }


def _rows(out: str) -> dict[str, tuple[str, str]]:
    rows = {}
    for line in out.splitlines()[:-1]:
        name, rest = line.split("  ", 1)
        status, message = rest.strip().split("  ", 1)
        rows[name.strip()] = (status, message.strip())
    return rows


def test_an_iceberg_connector_is_checked_through_its_catalog(stack, unique, catalog_file, tmp_path, capsys):
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(_document(stack, unique, catalog_file)))
    # given no namespace yet: the doctor fails naming it and what creates it
    assert main(["doctor", "--config", str(path)]) == 1
    rows = _rows(capsys.readouterr().out)
    assert {n for n, (status, _) in rows.items() if status == "FAILED"} == {"iceberg catalog"}
    assert rows["iceberg catalog"][1].startswith(f"namespace lake_{unique} does not exist in catalog")
    assert "sink-engine init" in rows["iceberg catalog"][1]
    # and it writes no S3 object probe: the run writes under the tables' locations, not under topics.dir
    assert not {"s3 write", "s3 incomplete uploads"} & set(rows) and "libraries" in rows
    assert "pyiceberg" in rows["libraries"][1]
    # when `init` created the namespace, then every check passes; the table is the first run's to create
    assert main(["init", "--config", str(path)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--config", str(path)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["iceberg catalog"] == (
        "ok",
        f"catalog iceberg, namespace lake_{unique}: 0 table(s) loaded, 1 "
        f"created by the first run: lake_{unique}.events",
    )


def test_a_fan_out_connector_is_checked_through_the_namespaces_it_declares(
    stack, unique, catalog_file, tmp_path, capsys
):
    document = _document(stack, unique, catalog_file)
    config = {k: v for k, v in document["config"].items() if k != "iceberg.tables"}
    document["config"] = {
        **config,
        "iceberg.tables.dynamic-enabled": "true",
        "iceberg.tables.route-field": "__source_table",
        "iceberg.tables.default-namespace": f"inv_{unique}",
        "iceberg.tables.route-namespaces": f"sales_{unique}",
    }
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(document))
    # given neither declared namespace yet: the doctor fails naming the first and the key that declares it
    assert main(["doctor", "--config", str(path)]) == 1
    status, message = _rows(capsys.readouterr().out)["iceberg catalog"]
    assert status == "FAILED" and message.startswith(f"namespace inv_{unique} does not exist in catalog")
    assert "(iceberg.tables.route-namespaces)" in message
    # when `init` creates each declared namespace, then the catalog check passes, naming them
    assert main(["init", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"namespace inv_{unique} in catalog iceberg: created" in out
    assert f"namespace sales_{unique} in catalog iceberg: created" in out
    assert main(["doctor", "--config", str(path)]) == 0
    assert _rows(capsys.readouterr().out)["iceberg catalog"] == (
        "ok",
        f"catalog iceberg: namespaces inv_{unique}, sales_{unique} exist; records name their tables in them "
        "(iceberg.tables.route-field=__source_table)",
    )
