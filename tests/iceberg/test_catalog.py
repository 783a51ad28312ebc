"""The SQL catalog on the local stack: `init` creates the namespace, tables live in moto's S3."""

from __future__ import annotations

import pyarrow as pa

from devtools.producer import produce_events
from sink_engine import cli
from sink_engine.target.iceberg_tables.catalog import create_table, load_table
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from tests.conftest import BUCKET
from tests.iceberg.runs import write_config
from tests.iceberg.tables import catalog_of, create_namespace, table_name, table_of
from tests.runs import committed_offsets


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
    bucket, prefix = table.metadata_location[len("s3://") :].split("/", 1)
    assert bucket == BUCKET and s3.head_object(Bucket=bucket, Key=prefix)["ContentLength"] > 0
    # a second create (another task first) loads the same table
    again = create_table(catalog, identifier, pa.schema([("other", pa.string())]), IcebergSettings.from_config(config))
    assert again.metadata.table_uuid == table.metadata.table_uuid


def _json(config) -> str:
    import orjson

    values = {k: config[k] for k in config.explicit if k != "name"}
    flat = {k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}
    return orjson.dumps({"name": config.name, "config": {**flat, **config.passthrough}}).decode()


def test_a_table_whose_metadata_cannot_be_read_stops_the_run_naming_it(
    stack, new_topic, iceberg_connector, tmp_path, capsys, s3, dynamodb
):
    """pyiceberg's file IO raises OSError (pyarrow's S3 filesystem); the run reports it as an error naming the
    table, commits nothing, and lets the lease go (the next run meets the same error, not a held lease)."""
    config = iceberg_connector()
    topic = config["topics"][0]
    create_namespace(config, topic)
    new_topic(topic, 1, events=20)
    config_file = write_config(config, tmp_path / "connector.json")
    assert cli.main(["run", "--config", str(config_file)]) == 0
    bucket, key = table_of(config).metadata_location[len("s3://") :].split("/", 1)
    s3.delete_object(Bucket=bucket, Key=key)  # e.g. removed by a lifecycle rule or by hand
    produce_events(stack.bootstrap_servers, topic, 20, 1, first_id=20)
    capsys.readouterr()
    for _ in range(2):
        assert cli.main(["run", "--config", str(config_file)]) == 1
        error = capsys.readouterr().err
        assert (
            error.startswith(f"error: table {table_name(config)}: reading its metadata failed: ")
            and key in error
            and "Traceback" not in error
        )
    assert committed_offsets(dynamodb, config) == {0: 20}
