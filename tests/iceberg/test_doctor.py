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
