"""The connector's partitioner as the table's partition spec: identity of a field, hour or day of the record's
time (a field's or Kafka's, kept as a column); files hold one partition each, and a filtered scan prunes."""

from __future__ import annotations

import datetime

import orjson

from devtools.producer import create_topic, produce, produce_events
from sink_engine.driver.job import run_job
from tests.iceberg.tables import create_namespace, ids, rows, table_of

HOUR_MS = 3_600_000
T0 = 1_700_000_000_000 - 1_700_000_000_000 % HOUR_MS  # an hour's first millisecond (2023-11-14T22:00Z)


def _topic(stack, config, partitions: int) -> str:
    topic = config["topics"][0]
    create_namespace(config, topic)
    create_topic(stack.bootstrap_servers, topic, partitions)
    return topic


def _files_scanned(config, row_filter: str) -> int:
    return len(list(table_of(config).scan(row_filter=row_filter).plan_files()))


def test_field_partitioner_is_an_identity_partition(stack, spark, dynamodb, iceberg_connector):
    config = iceberg_connector(**{"partitioner.class": "FieldPartitioner", "partition.field.name": "region"})
    produce_events(stack.bootstrap_servers, _topic(stack, config, 2), 90, 2)
    run_job(config, spark, dynamodb)
    table = table_of(config)
    [field] = table.spec().fields
    assert (field.name, str(field.transform), table.schema().find_column_name(field.source_id)) == (
        "region",
        "identity",
        "region",
    )
    # each data file holds one region, named in its path
    files = list(table.scan().plan_files())
    assert len(files) == 6  # 3 regions in each of 2 Kafka partitions
    assert all(f"/data/region={f.file.partition[0]}/" in f.file.file_path for f in files)
    # a scan with a filter on the field reads only that partition's files
    assert _files_scanned(config, "region == 'eu-central'") == 2
    assert sorted(r["event_id"] for r in rows(config, row_filter="region == 'eu-central'")) == [
        i for i in range(90) if (i // 3) % 3 == 2
    ]


def test_hourly_partitioner_on_a_record_field(stack, spark, dynamodb, iceberg_connector):
    config = iceberg_connector(
        **{"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "RecordField", "timestamp.field": "ts"}
    )
    topic = _topic(stack, config, 1)
    # 30 records over three hours, their time an ISO-8601 string (read as the S3 path reads timestamp.field)
    times = [T0 + i * 6 * 60_000 for i in range(30)]
    produce(stack.bootstrap_servers, topic, [orjson.dumps({"n": i, "ts": _iso(t)}) for i, t in enumerate(times)], 1)
    run_job(config, spark, dynamodb)
    table = table_of(config)
    [field] = table.spec().fields
    assert (str(field.transform), table.schema().find_column_name(field.source_id)) == ("hour", "_record_timestamp")
    assert [r["_record_timestamp"] for r in sorted(rows(config), key=lambda r: r["n"])] == [
        datetime.datetime.fromtimestamp(t / 1000, datetime.UTC) for t in times
    ]
    # one file per hour; a filter on the time reads only the hours it can match
    assert len(list(table.scan().plan_files())) == 3
    assert _files_scanned(config, f"_record_timestamp >= '{_iso(T0 + 2 * HOUR_MS)}'") == 1
    assert ids(config, "n") == list(range(30))


def test_daily_partitioner_on_the_kafka_timestamp(stack, spark, dynamodb, iceberg_connector):
    config = iceberg_connector(**{"partitioner.class": "DailyPartitioner", "timestamp.extractor": "Record"})
    produce_events(stack.bootstrap_servers, _topic(stack, config, 2), 20, 2)
    run_job(config, spark, dynamodb)
    table = table_of(config)
    [field] = table.spec().fields
    assert (str(field.transform), table.schema().find_column_name(field.source_id)) == (
        "day",
        "_kafka_metadata_timestamp",
    )
    today = datetime.datetime.now(datetime.UTC).date()
    found = rows(config)
    assert len(found) == 20 and all(r["_kafka_metadata_timestamp"].date() == today for r in found)
    # the other Kafka metadata columns are not asked for
    assert "_kafka_metadata_offset" not in found[0]


def _iso(epoch_ms: int) -> str:
    return datetime.datetime.fromtimestamp(epoch_ms / 1000, datetime.UTC).isoformat()
