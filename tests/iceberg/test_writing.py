"""Writing a topic to an Iceberg table: data files with the table's field ids under its location, one snapshot
per run, read back with pyiceberg scans."""

from __future__ import annotations

import pyarrow.parquet as pq

from devtools.producer import create_topic, produce_events
from sink_engine.driver.job import run_job
from tests.iceberg.tables import connector_snapshots, create_namespace, ids, newest_offsets, rows, table_of
from tests.runs import committed_offsets


def prepared(stack, config, partitions: int, events: int):
    topic = config["topics"][0]
    create_namespace(config, topic)
    create_topic(stack.bootstrap_servers, topic, partitions)
    produce_events(stack.bootstrap_servers, topic, events, partitions)
    return topic


def test_a_run_appends_every_record_in_one_snapshot(stack, spark, s3, dynamodb, iceberg_connector):
    config = iceberg_connector()
    prepared(stack, config, 3, 250)
    # when one run
    summary = run_job(config, spark, dynamodb)
    # then every record is a row of the table, once, committed in one snapshot with each partition's next offset
    assert ids(config) == list(range(250))
    [snapshot] = connector_snapshots(config)
    assert snapshot.summary["sink-engine.epoch"] and snapshot.summary["added-records"] == "250"
    assert newest_offsets(config) == committed_offsets(dynamodb, config) == {0: 84, 1: 83, 2: 83}
    # and the schema is the records' (inferred from schemaless JSON), every column optional
    table = table_of(config)
    assert [f.name for f in table.schema().fields] == ["event_id", "event_type", "region", "timestamp", "user_id"]
    assert all(not f.required for f in table.schema().fields)
    # and the data files are Parquet with the table's field ids, under the table's location
    assert summary.records_written == 250
    for data_file in summary.files:
        assert data_file.key.startswith(table.location() + "/data/")
        bucket, key = data_file.key[len("s3://") :].split("/", 1)
        parquet = pq.ParquetFile(_download(s3, bucket, key))
        ids_in_file = [
            parquet.schema_arrow.field(name).metadata[b"PARQUET:field_id"] for name in ("event_id", "user_id")
        ]
        assert ids_in_file == [str(table.schema().find_field(n).field_id).encode() for n in ("event_id", "user_id")]


def test_a_rerun_appends_nothing_and_new_records_follow(stack, spark, dynamodb, iceberg_connector):
    config = iceberg_connector()
    topic = prepared(stack, config, 2, 100)
    run_job(config, spark, dynamodb)
    # when the run is repeated with no new data
    summary = run_job(config, spark, dynamodb)
    # then nothing is appended
    assert summary.files == [] and len(connector_snapshots(config)) == 1
    # and records produced later land in a second snapshot
    produce_events(stack.bootstrap_servers, topic, 60, 2, first_id=100)
    run_job(config, spark, dynamodb)
    assert ids(config) == list(range(160))
    assert len(connector_snapshots(config)) == 2
    assert committed_offsets(dynamodb, config) == {0: 80, 1: 80}


def test_kafka_metadata_columns(stack, spark, dynamodb, iceberg_connector):
    config = iceberg_connector(**{"iceberg.tables.kafka-metadata-enabled": "true"})
    topic = prepared(stack, config, 2, 10)
    run_job(config, spark, dynamodb)
    found = sorted(rows(config), key=lambda r: (r["_kafka_metadata_partition"], r["_kafka_metadata_offset"]))
    assert [
        (r["_kafka_metadata_topic"], r["_kafka_metadata_partition"], r["_kafka_metadata_offset"]) for r in found
    ] == [(topic, p, o) for p in (0, 1) for o in range(5)]
    assert all(r["_kafka_metadata_timestamp"] is not None for r in found)
    assert "_kafka_metadata_key" in found[0]


def _download(s3, bucket: str, key: str):
    import io

    return io.BytesIO(s3.get_object(Bucket=bucket, Key=key)["Body"].read())


def test_target_file_size_cuts_data_files(stack, spark, dynamodb, iceberg_connector):
    config = iceberg_connector(**{"iceberg.tables.auto-create-props.write.target-file-size-bytes": "8192"})
    prepared(stack, config, 1, 2000)
    summary = run_job(config, spark, dynamodb)
    # then the range's rows are cut into several files (pyiceberg measures the target in Arrow bytes), all in one
    # snapshot
    assert len(summary.files) > 3
    assert sum(f.record_count for f in summary.files) == 2000
    assert connector_snapshots(config)[0].summary["added-data-files"] == str(len(summary.files))
    assert ids(config) == list(range(2000))
