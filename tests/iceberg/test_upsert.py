"""Upsert tables (iceberg.tables.upsert-mode-enabled): after each run the table holds each key's last change, as a
model of the source table says, read by pyiceberg and by a reader of our own."""

from __future__ import annotations

import pytest

from devtools.producer import create_topic
from sink_engine.driver.job import TaskFailedError, run_job
from sink_engine.errors import ConfigError
from sink_engine.validation import check_config
from tests.iceberg.tables import connector_snapshots, create_namespace, table_of
from tests.iceberg.upserts import SourceTable, duckdb_table_rows, own_rows, produce_changes, pyiceberg_rows
from tests.runs import committed_offsets

UPSERT = {
    "iceberg.tables.upsert-mode-enabled": "true",
    "iceberg.tables.default-id-columns": "id",
    "iceberg.tables.cdc-field": "__op",
    "behavior.on.null.values": "write",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "false",
}


def upsert_table(stack, iceberg_connector, partitions: int = 2, **overrides):
    config = iceberg_connector(**{**UPSERT, **overrides})
    create_namespace(config)
    create_topic(stack.bootstrap_servers, config["topics"][0], partitions)
    return config


def test_a_cdc_stream_leaves_each_keys_last_change(stack, spark, s3, dynamodb, iceberg_connector):
    # given a source table's changes: inserts, updates, deletes (by the cdc field and by tombstones), a key
    # changed many times within a run and across runs, keys deleted and inserted again
    config = upsert_table(stack, iceberg_connector)
    topic, source = config["topics"][0], SourceTable(seed=31)
    for run in range(4):
        produce_changes(stack.bootstrap_servers, topic, source.cdc_records(source.changes(120)))
        # when a run commits them
        run_job(config, spark, dynamodb)
        # then the table is the source table, by each of three readers
        expected = [{k: r[k] for k in ("id", "name", "amount")} for r in source.expected()]
        assert pyiceberg_rows(config) == expected, f"run {run}"
        assert duckdb_table_rows(config) == expected, f"run {run}"
        assert own_rows(s3, config) == expected, f"run {run}"
    # and each run is one snapshot, the table's identifier field is the id column, required
    assert len(connector_snapshots(config)) == 4
    schema = table_of(config).schema()
    assert schema.identifier_field_names() == {"id"} and schema.find_field("id").required
    assert sum(committed_offsets(dynamodb, config).values()) == 480


def test_a_rerun_changes_nothing(stack, spark, s3, dynamodb, iceberg_connector):
    config = upsert_table(stack, iceberg_connector)
    source = SourceTable(seed=5)
    produce_changes(stack.bootstrap_servers, config["topics"][0], source.cdc_records(source.changes(60)))
    run_job(config, spark, dynamodb)
    # when the run is repeated with nothing new
    summary = run_job(config, spark, dynamodb)
    # then nothing is committed and the table is unchanged
    assert summary.files == [] and len(connector_snapshots(config)) == 1
    assert pyiceberg_rows(config) == [{k: r[k] for k in ("id", "name", "amount")} for r in source.expected()]


def test_a_run_of_deletes_only_commits_them(stack, spark, s3, dynamodb, iceberg_connector):
    config = upsert_table(stack, iceberg_connector)
    topic = config["topics"][0]
    source = SourceTable(seed=9)
    produce_changes(stack.bootstrap_servers, topic, source.cdc_records(source.changes(30, ids=10)))
    run_job(config, spark, dynamodb)
    # when a run reads only deletes (a tombstone and a cdc delete)
    gone = sorted(source.rows)[:2]
    deletes = [(gone[0], None, "tombstone"), (gone[1], None, "d")]
    for key in gone:
        del source.rows[key]
    produce_changes(stack.bootstrap_servers, topic, source.cdc_records(deletes))
    run_job(config, spark, dynamodb)
    # then their rows are gone, in a snapshot of their own
    assert [r["id"] for r in pyiceberg_rows(config)] == sorted(source.rows)
    assert len(connector_snapshots(config)) == 2


def test_a_continuous_run_takes_upsert_tables_but_not_fan_out(iceberg_connector):
    from sink_engine.continuous.driver import check_continuous

    check_continuous(check_config(iceberg_connector(**UPSERT)))  # tests/continuous/test_upsert_continuous.py
    routed = {
        "iceberg.tables.dynamic-enabled": "true",
        "iceberg.tables.route-field": "t",
        "behavior.on.null.values": "ignore",
    }
    with pytest.raises(ConfigError) as raised:
        check_continuous(check_config(iceberg_connector(**{**UPSERT, **routed})))
    assert raised.value.key == "iceberg.tables.dynamic-enabled" and "bounded runs only" in str(raised.value)


@pytest.mark.parametrize(
    ("overrides", "key", "message"),
    [
        ({"iceberg.tables.default-id-columns": None}, "iceberg.table.", "needs id columns"),
        (
            {"iceberg.tables.upsert-mode-enabled": "false", "behavior.on.null.values": None},
            "iceberg.tables.default-id-columns",
            "upsert tables only",
        ),
        (
            {
                "iceberg.tables.upsert-mode-enabled": "false",
                "iceberg.tables.default-id-columns": None,
                "behavior.on.null.values": None,
            },
            "iceberg.tables.cdc-field",
            "upsert tables only",
        ),
        (
            {
                "iceberg.tables.upsert-mode-enabled": "false",
                "iceberg.tables.default-id-columns": None,
                "iceberg.tables.cdc-field": None,
            },
            "behavior.on.null.values",
            "upsert-mode-enabled",
        ),
        ({"iceberg.table.other.t.color": "x"}, "iceberg.table.other.t.color", "is unknown"),
    ],
)
def test_configuration_errors_name_the_key(iceberg_connector, overrides, key, message):
    config = {**UPSERT, **{k: v for k, v in overrides.items() if v is not None}}
    for k, v in overrides.items():
        if v is None:
            config.pop(k)
    with pytest.raises(ConfigError) as raised:
        check_config(iceberg_connector(**config))
    assert raised.value.key.startswith(key) and message in str(raised.value)


_ROW = {
    "type": "struct",
    "name": "db.inventory.customers.Value",
    "optional": True,
    "fields": [
        {"field": "id", "type": "int32"},
        {"field": "name", "type": "string"},
        {"field": "amount", "type": "int64"},
    ],
}
_ENVELOPE = {
    "type": "struct",
    "name": "db.inventory.customers.Envelope",
    "fields": [
        {**_ROW, "field": "before"},
        {**_ROW, "field": "after"},
        {
            "type": "struct",
            "name": "io.debezium.connector.postgresql.Source",
            "field": "source",
            "fields": [{"field": "table", "type": "string"}],
        },
        {"field": "op", "type": "string"},
        {"field": "ts_ms", "type": "int64", "optional": True},
    ],
}
_KEY = {"type": "struct", "name": "db.inventory.customers.Key", "fields": [{"field": "id", "type": "int32"}]}


def debezium_records(changes, before: dict[int, dict], partitions: int = 2) -> list:
    """Debezium's change events of `changes` (SourceTable's), keyed with Connect JSON keys: a delete is its envelope
    (op d, the row before) followed by Debezium's tombstone."""
    import orjson

    records = []
    for key, row, op in changes:
        partition, record_key = key % partitions, orjson.dumps({"schema": _KEY, "payload": {"id": key}})
        payload = {
            "before": before.get(key),
            "after": row,
            "source": {"table": "customers"},
            "op": "d" if row is None else op,
            "ts_ms": 1,
        }
        records.append((partition, record_key, orjson.dumps({"schema": _ENVELOPE, "payload": payload})))
        if row is None:
            records.append((partition, record_key, None))
            before.pop(key, None)
        else:
            before[key] = row
    return records


@pytest.mark.parametrize("deletes", ["rewrite", "tombstone"])
def test_debezium_envelopes_through_extract_new_record_state(stack, spark, s3, dynamodb, iceberg_connector, deletes):
    # given Debezium's change events unwrapped by ExtractNewRecordState: a delete rewritten as its before state with
    # `__op` d (the cdc field), or turned into a tombstone that the key names
    unwrap = {
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.delete.tombstone.handling.mode": deletes,
        "transforms.unwrap.add.fields": "op",
        "value.converter.schemas.enable": "true",
        "key.converter.schemas.enable": "true",
    }
    config = upsert_table(stack, iceberg_connector, **unwrap)
    source, before = SourceTable(seed=77), {}
    for run in range(3):
        produce_changes(
            stack.bootstrap_servers, config["topics"][0], debezium_records(source.changes(80, tombstones=False), before)
        )
        run_job(config, spark, dynamodb)
        # then after each run the table is the source table, by both readers
        expected = [{k: r[k] for k in ("id", "name", "amount")} for r in source.expected()]
        assert pyiceberg_rows(config) == own_rows(s3, config) == expected, f"run {run}"


DEBEZIUM_DEFAULTS = {  # ExtractNewRecordState as Debezium's defaults leave it: deletes dropped, tombstones kept
    "iceberg.tables.upsert-mode-enabled": "true",
    "iceberg.tables.default-id-columns": "id",
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "true",  # JsonConverter's default (the test connector's is false)
}


def test_debezium_default_tombstones_delete_with_only_the_upsert_keys_set(
    stack, spark, s3, dynamodb, iceberg_connector
):
    # given Debezium's default stream (a tombstone after each delete) and a connector that sets only the upsert keys
    config = iceberg_connector(**DEBEZIUM_DEFAULTS)
    create_namespace(config)
    create_topic(stack.bootstrap_servers, config["topics"][0], 2)
    assert config["behavior.on.null.values"] == "write"
    source, before = SourceTable(seed=41), {}
    for run in range(2):
        produce_changes(
            stack.bootstrap_servers, config["topics"][0], debezium_records(source.changes(80, tombstones=False), before)
        )
        # when a run commits them
        run_job(config, spark, dynamodb)
        # then the deletes are applied: the table is the model, by both readers
        expected = [{k: r[k] for k in ("id", "name", "amount")} for r in source.expected()]
        assert pyiceberg_rows(config) == duckdb_table_rows(config) == expected, f"run {run}"


def test_an_explicit_fail_still_stops_at_the_first_tombstone(stack, spark, s3, dynamodb, iceberg_connector):
    # given the same stream with behavior.on.null.values=fail written, one partition: an insert, a delete, its
    # tombstone
    config = iceberg_connector(**DEBEZIUM_DEFAULTS, **{"behavior.on.null.values": "fail"})
    create_namespace(config)
    topic = config["topics"][0]
    create_topic(stack.bootstrap_servers, topic, 1)
    produce_changes(
        stack.bootstrap_servers,
        topic,
        debezium_records([(1, {"id": 1, "name": "a", "amount": 1}, "c"), (1, None, "d")], {}, 1),
    )
    # when it runs, then it stops at the delete (ExtractNewRecordState's default makes it a null value, as the
    # tombstone after it), naming its offset; nothing from it on is committed
    with pytest.raises(TaskFailedError, match=rf"{topic}-0@1: null value .*behavior.on.null.values=fail"):
        run_job(config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {0: 1}
    assert pyiceberg_rows(config) == [{"id": 1, "name": "a", "amount": 1}]


def test_a_column_added_mid_stream(stack, spark, s3, dynamodb, iceberg_connector):
    config = upsert_table(stack, iceberg_connector, **{"iceberg.tables.evolve-schema-enabled": "true"})
    topic, source = config["topics"][0], SourceTable(seed=13)
    produce_changes(stack.bootstrap_servers, topic, source.cdc_records(source.changes(60)))
    run_job(config, spark, dynamodb)
    # given changes whose rows gain a column, after the run's first 20 changes
    changes = source.changes(60)
    for i, (_, row, _) in enumerate(changes):
        if i >= 20 and row is not None:
            row["tier"] = f"t{i}"
    produce_changes(stack.bootstrap_servers, topic, source.cdc_records(changes))
    # when a run applies them
    run_job(config, spark, dynamodb)
    # then the table has the column, each row holding its last change's value (null where it had none)
    expected = [
        {"id": r["id"], "name": r["name"], "amount": r["amount"], "tier": r.get("tier")} for r in source.expected()
    ]
    assert pyiceberg_rows(config, ("id", "name", "amount", "tier")) == expected
    assert own_rows(s3, config, ("id", "name", "amount", "tier")) == expected


def test_a_table_partitioned_by_a_column(stack, spark, s3, dynamodb, iceberg_connector):
    # given a table partitioned by `region`, a column whose value a key's updates change
    config = upsert_table(
        stack,
        iceberg_connector,
        **{
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "region",
        },
    )
    topic, source = config["topics"][0], SourceTable(seed=21)
    for run in range(3):
        changes = source.changes(80)
        for key, row, _ in changes:
            if row is not None:
                row["region"] = f"r{(key + len(row['name'])) % 3}"
        produce_changes(stack.bootstrap_servers, topic, source.cdc_records(changes))
        run_job(config, spark, dynamodb)
        # then each key has one row, in the partition of its last value
        columns = ("id", "name", "amount", "region")
        expected = [{k: r[k] for k in columns} for r in source.expected()]
        readers = pyiceberg_rows(config, columns), duckdb_table_rows(config, columns), own_rows(s3, config, columns)
        assert readers == (expected, expected, expected), f"run {run}"
    assert [f.name for f in table_of(config).spec().fields] == ["region"]


def test_bad_changes_are_dead_lettered(stack, spark, s3, dynamodb, iceberg_connector):
    from tests.conftest import BUCKET
    from tests.dlq_corpus import read_dlq_s3

    config = upsert_table(
        stack, iceberg_connector, 1, **{"errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "upsert-dlq"}
    )
    topic = config["topics"][0]
    # given an insert, a change whose operation is unknown, one without an id, a tombstone whose key names no row
    # (a string for an int column), then an update
    import orjson

    records = [
        (0, b'{"id": 1}', orjson.dumps({"id": 1, "name": "a", "__op": "c"})),
        (0, b'{"id": 2}', orjson.dumps({"id": 2, "name": "b", "__op": "X"})),
        (0, b'{"id": 3}', orjson.dumps({"id": None, "name": "c", "__op": "c"})),
        (0, b'"three"', None),
        (0, b'{"id": 1}', orjson.dumps({"id": 1, "name": "a2", "__op": "u"})),
    ]
    produce_changes(stack.bootstrap_servers, topic, records)
    run_job(config, spark, dynamodb)
    # then the good changes are applied and each bad one is dead-lettered naming what is wrong
    assert pyiceberg_rows(config, ("id", "name")) == [{"id": 1, "name": "a2"}]
    letters = sorted(read_dlq_s3(s3, BUCKET, f"upsert-dlq/{topic}/"), key=lambda letter: letter["offset"])
    assert [(letter["offset"], letter["error"]["class"]) for letter in letters] == [
        (1, "TableSchemaError"),
        (2, "TableSchemaError"),
        (3, "TableSchemaError"),
    ]
    assert "column __op" in letters[0]["error"]["message"]
    assert "column id" in letters[1]["error"]["message"]
    assert "a tombstone" in letters[2]["error"]["message"]
    assert committed_offsets(dynamodb, config) == {0: 5}


def test_a_stage_that_spans_two_cuts_keeps_the_later_cuts_change(stack, iceberg_connector):
    """A continuous run's task cuts its upsert table's changes at each interval; when the driver commits two cuts of
    a partition at once (it fell behind), the second cut's change of a key replaces the first's."""
    import orjson

    from sink_engine.records import RecordChunk, ValueColumn
    from sink_engine.target.iceberg_tables.settings import IcebergSettings
    from sink_engine.target.iceberg_tables.table_writer import TableWriter
    from sink_engine.target.iceberg_tables.task import TableFiles
    from sink_engine.target.iceberg_tables.upsert import run_files

    config = iceberg_connector(**UPSERT)
    create_namespace(config)
    topic = config["topics"][0]
    writer = TableWriter(IcebergSettings.from_config(config), topic, 0, 0)

    def cut(first: int, values: list[dict]) -> None:
        texts = [orjson.dumps(v) for v in values]
        chunk = RecordChunk(
            topic,
            0,
            list(range(first, first + len(values))),
            texts,
            keys=[None] * len(values),
            timestamps=[0] * len(values),
        )
        writer.write(chunk, ValueColumn("json", texts))
        writer.finish()

    # given two cuts: keys 1 and 2 written, then 1 updated and 2 deleted
    cut(
        0,
        [{"id": 1, "name": "a", "__op": "c"}, {"id": 2, "name": "b", "__op": "c"}, {"id": 3, "name": "c", "__op": "r"}],
    )
    cut(3, [{"id": 1, "name": "a2", "__op": "u"}, {"id": 2, "name": "b", "__op": "d"}])
    # when both are staged and committed together
    parts = writer.finished_parts(tuple(writer.closed), 5)
    assert [keys["id"].to_pylist() for _, keys in parts] == [[1, 2, 3], [1, 2]]
    table = writer.table
    removed, added = run_files(table, [TableFiles(tuple(files), keys) for files, keys in parts])
    with table.transaction() as tx, tx.update_snapshot().overwrite() as overwrite:
        for data_file in added:
            overwrite.append_data_file(data_file)
    # then the table holds each key's last change once
    assert not removed
    assert pyiceberg_rows(config, ("id", "name")) == [{"id": 1, "name": "a2"}, {"id": 3, "name": "c"}]
    # and once committed, the writer lets go of both cuts
    writer.let_go(5)
    assert (writer.closed, writer.data_files, writer.finished_keys) == ([], [], [])
