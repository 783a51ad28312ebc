"""The SQL catalog on the local stack: `init` creates the namespace, tables live in moto's S3."""
from __future__ import annotations

import pyarrow as pa

from sink_engine import cli
from sink_engine.iceberg.catalog import create_table, load_table
from sink_engine.iceberg.settings import IcebergSettings
from tests.conftest import BUCKET
from tests.iceberg.tables import catalog_of, table_name


def test_init_creates_the_namespace_once(iceberg_connector, tmp_path, capsys, s3):
    config = iceberg_connector()
    config_file = tmp_path / "connector.json"
    config_file.write_text(_json(config))
    assert cli.main(["init", "--config", str(config_file)]) == 0
    namespace = config["iceberg.tables"][0].split(".")[0]
    assert f"namespace {namespace} in catalog iceberg: created" in capsys.readouterr().out
    assert cli.main(["init", "--config", str(config_file)]) == 0
    assert f"namespace {namespace} in catalog iceberg: exists" in capsys.readouterr().out


def test_a_created_table_keeps_its_metadata_in_the_warehouse(iceberg_connector, s3):
    config = iceberg_connector()
    catalog = catalog_of(config)
    identifier = table_name(config)
    catalog.create_namespace_if_not_exists(identifier.split(".")[0])
    assert load_table(catalog, identifier) is None
    table = create_table(catalog, identifier, pa.schema([("n", pa.int64())]), IcebergSettings.from_config(config))
    assert table.location().startswith(config["iceberg.catalog.warehouse"])
    bucket, prefix = table.metadata_location[len("s3://"):].split("/", 1)
    assert bucket == BUCKET and s3.head_object(Bucket=bucket, Key=prefix)["ContentLength"] > 0
    # a second create (another task first) loads the same table
    again = create_table(catalog, identifier, pa.schema([("other", pa.string())]),
                         IcebergSettings.from_config(config))
    assert again.metadata.table_uuid == table.metadata.table_uuid


def _json(config) -> str:
    import orjson

    values = {k: config[k] for k in config.explicit if k != "name"}
    flat = {k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}
    return orjson.dumps({"name": config.name, "config": {**flat, **config.passthrough}}).decode()
