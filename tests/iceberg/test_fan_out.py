"""Fan-out by field (`iceberg.tables.dynamic-enabled` with `iceberg.tables.route-field`): each record goes to the
table its field names, each table's records of a run in one snapshot of it, exactly once across a crash between two
tables' commits, reruns and two runs at once; appends and upsert tables (a CDC stream of three source tables in one
topic), read by pyiceberg, DuckDB's iceberg extension and our own reader."""

from __future__ import annotations

import random

import orjson
import pytest

from devtools.producer import create_topic, produce
from sink_engine.driver.job import TaskFailedError, run_job
from sink_engine.errors import ConfigError
from sink_engine.failpoints import SimulatedCrash
from sink_engine.target.choice import target_for
from tests.conftest import BUCKET
from tests.dlq_corpus import read_dlq_s3
from tests.iceberg.runs import crash_after_table_commits, write_config
from tests.iceberg.tables import catalog_of, connector_snapshots, table_view
from tests.iceberg.test_upsert import UPSERT
from tests.iceberg.upserts import SourceTable, duckdb_table_rows, own_rows, produce_changes, pyiceberg_rows
from tests.runs import committed_offsets, past_the_lease, two_runs_at_once

LEASE_MS = 3000
NAMES = ("customers", "orders", "items")
COLUMNS = ("id", "name", "amount")


@pytest.fixture
def routed(stack, iceberg_connector, unique):
    """A connector routing by `__table` to three tables of a fresh namespace, over a topic of two partitions; returns
    (config, identifiers)."""

    def build(partitions: int = 2, **overrides):
        config = iceberg_connector(
            **{
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "__table",
                "sink.lease.duration.ms": LEASE_MS,
                **overrides,
            }
        )
        catalog_of(config).create_namespace(f"lake_{unique}")
        create_topic(stack.bootstrap_servers, config["topics"][0], partitions)
        return config, [f"lake_{unique}.{name}" for name in NAMES]

    return build


def row(n: int, table=None) -> dict:
    """Record n of a table (`__table` left out when None)."""
    return {"id": n, "name": f"n{n}", "amount": n * 10, **({} if table is None else {"__table": table})}


def read_three_ways(s3, config, identifier: str) -> list[dict]:
    """The table's rows as pyiceberg, DuckDB and our own reader read them, asserted equal."""
    view = table_view(config, identifier)
    readers = pyiceberg_rows(view, COLUMNS), duckdb_table_rows(view, COLUMNS), own_rows(s3, view, COLUMNS)
    assert readers[0] == readers[1] == readers[2], identifier
    return readers[0]


def test_records_go_to_the_table_their_field_names(stack, spark, s3, dynamodb, routed):
    config, tables = routed()
    rng, expected = random.Random(5), {t: [] for t in tables}
    for run in range(2):
        # given records of three tables interleaved over two partitions, the field's case mixed
        values = []
        for n in range(run * 300, run * 300 + 300):
            table = rng.choice(tables)
            expected[table].append(row(n))
            values.append(orjson.dumps(row(n, table.upper() if n % 7 == 0 else table)))
        produce(stack.bootstrap_servers, config["topics"][0], values, 2)
        # when a run writes them
        run_job(config, spark, dynamodb)
        # then each table holds its records once, in one snapshot per run
        for table in tables:
            assert read_three_ways(s3, config, table) == sorted(expected[table], key=lambda r: r["id"])
            assert len(connector_snapshots(table_view(config, table))) == run + 1
    assert committed_offsets(dynamodb, config) == {0: 300, 1: 300}


def test_a_record_naming_no_table_is_a_bad_record(stack, spark, s3, dynamodb, routed):
    config, tables = routed(1, **{"errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "fan-out-dlq"})
    topic = config["topics"][0]
    # given a record without the field, one naming a table without a namespace, one whose field is a number
    values = [row(0, tables[0]), row(1), row(2, "orders"), row(3, 7), row(4, tables[1])]
    produce(stack.bootstrap_servers, topic, [orjson.dumps(v) for v in values], 1)
    run_job(config, spark, dynamodb)
    # then the others land and each bad one is dead-lettered naming the field, the offset moving past them
    assert [r["id"] for r in read_three_ways(s3, config, tables[0])] == [0]
    assert [r["id"] for r in read_three_ways(s3, config, tables[1])] == [4]
    letters = sorted(read_dlq_s3(s3, BUCKET, f"fan-out-dlq/{topic}/"), key=lambda letter: letter["offset"])
    assert [(letter["offset"], letter["error"]["class"]) for letter in letters] == [
        (1, "FieldError"),
        (2, "FieldError"),
        (3, "FieldError"),
    ]
    assert all("field '__table'" in letter["error"]["message"] for letter in letters)
    assert "not `namespace.table`" in letters[1]["error"]["message"]
    assert committed_offsets(dynamodb, config) == {0: 5}


def test_a_record_its_table_refuses_among_other_tables_records_is_dead_lettered_once(
    stack, spark, s3, dynamodb, routed
):
    config, tables = routed(1, **{"errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "fan-out-dlq"})
    topic = config["topics"][0]
    # given one chunk of records of three tables interleaved, one of them a string where its table has a number
    values = [row(n, tables[n % 2]) for n in range(7)]
    values[3]["amount"], values[6]["__table"] = "thirty", tables[2]
    produce(stack.bootstrap_servers, topic, [orjson.dumps(v) for v in values], 1)
    run_job(config, spark, dynamodb)
    # then every other record lands once in its table, the refused one is dead-lettered, the offset moves past all
    assert [r["id"] for r in read_three_ways(s3, config, tables[0])] == [0, 2, 4]
    assert [r["id"] for r in read_three_ways(s3, config, tables[1])] == [1, 5]
    assert [r["id"] for r in read_three_ways(s3, config, tables[2])] == [6]
    [letter] = read_dlq_s3(s3, BUCKET, f"fan-out-dlq/{topic}/")
    assert (letter["offset"], letter["error"]["class"]) == (3, "TableSchemaError")
    assert tables[1] in letter["error"]["message"]
    assert committed_offsets(dynamodb, config) == {0: 7}


def test_without_tolerance_a_record_naming_no_table_stops_the_run_before_it(stack, spark, s3, dynamodb, routed):
    config, tables = routed(1)
    values = [row(0, tables[0]), row(1, tables[2]), row(2), row(3, tables[0])]
    produce(stack.bootstrap_servers, config["topics"][0], [orjson.dumps(v) for v in values], 1)
    with pytest.raises(TaskFailedError, match=r"record .*-0@2: field '__table'.* is missing"):
        run_job(config, spark, dynamodb)
    assert [r["id"] for r in read_three_ways(s3, config, tables[0])] == [0]
    assert [r["id"] for r in read_three_ways(s3, config, tables[2])] == [1]
    assert committed_offsets(dynamodb, config) == {0: 2}


def test_a_crash_between_two_tables_commits_appends_each_record_once(stack, spark, s3, dynamodb, routed):
    config, tables = routed()
    expected = {t: [] for t in tables}

    def produced(first: int, count: int) -> None:
        values = []
        for n in range(first, first + count):
            expected[tables[n % 3]].append(row(n))
            values.append(orjson.dumps(row(n, tables[n % 3])))
        produce(stack.bootstrap_servers, config["topics"][0], values, 2)

    # given a run that dies once two of its tables' snapshots are committed (the three commit at once)
    produced(0, 120)
    with crash_after_table_commits(2) as committed, pytest.raises(SimulatedCrash):
        run_job(config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {}
    # when more records arrive and the job runs again
    produced(120, 60)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then every table holds each of its records once: the committed tables got only the new ones
    for table in tables:
        assert read_three_ways(s3, config, table) == sorted(expected[table], key=lambda r: r["id"]), table
    assert [len(connector_snapshots(table_view(config, t))) for t in tables] == [1 + (t in committed) for t in tables]
    assert committed_offsets(dynamodb, config) == {0: 90, 1: 90}


class CdcStream:
    """Three source tables' change streams in one topic, each change carrying its table in `__table` (deletes as
    values with `__op` d, as ExtractNewRecordState's delete.handling.mode=rewrite writes them)."""

    def __init__(self, tables: list[str], partitions: int):
        self.sources = {t: SourceTable(seed=i, partitions=partitions) for i, t in enumerate(tables)}
        self.rng = random.Random(41)

    def produce(self, bootstrap: str, topic: str, count: int) -> None:
        per_table = {t: s.cdc_records(s.changes(count, tombstones=False)) for t, s in self.sources.items()}
        records = []
        while any(per_table.values()):
            table = self.rng.choice([t for t, left in per_table.items() if left])
            partition, key, value = per_table[table].pop(0)
            records.append((partition, key, orjson.dumps({**orjson.loads(value), "__table": table})))
        produce_changes(bootstrap, topic, records)

    def expected(self, table: str) -> list[dict]:
        return [{k: r[k] for k in COLUMNS} for r in self.sources[table].expected()]


def upserts(routed, partitions: int = 2):
    config, tables = routed(partitions, **{**UPSERT, "behavior.on.null.values": "ignore"})
    return config, tables, CdcStream(tables, partitions)


def test_fan_out_to_three_upsert_tables_with_a_crash_between_them(stack, spark, s3, dynamodb, routed):
    config, tables, stream = upserts(routed)
    topic = config["topics"][0]
    stream.produce(stack.bootstrap_servers, topic, 60)
    run_job(config, spark, dynamodb)
    # given a run that dies once the first table's snapshot is committed, the other two not
    stream.produce(stack.bootstrap_servers, topic, 60)
    with crash_after_table_commits(1) as committed, pytest.raises(SimulatedCrash):
        run_job(config, spark, dynamodb)
    assert len(committed) == 1  # the three commits start at once (8 threads): any one of them
    # when the job runs again, then after new changes once more
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    stream.produce(stack.bootstrap_servers, topic, 40)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then each table is its source table: the first table's changes were not applied twice, the others' not lost
    for table in tables:
        assert read_three_ways(s3, config, table) == stream.expected(table), table
        assert len(connector_snapshots(table_view(config, table))) == 3, table
    assert sum(committed_offsets(dynamodb, config).values()) == 3 * 160


def test_two_runs_at_once_fan_out_each_change_once(stack, spark, s3, dynamodb, routed, tmp_path):
    config, tables, stream = upserts(routed)
    path = write_config(config, tmp_path / "connector.json")
    for _ in range(2):
        stream.produce(stack.bootstrap_servers, config["topics"][0], 50)
        codes = two_runs_at_once(path)
        assert codes[0] == 0 and set(codes) <= {0, 3, 4}, codes
    for table in tables:
        assert read_three_ways(s3, config, table) == stream.expected(table), table


def test_maintain_finds_the_tables_the_connector_wrote(stack, spark, s3, dynamodb, routed, tmp_path, capsys):
    from sink_engine import cli

    config, tables = routed(1)
    values = [row(n, tables[n % 2]) for n in range(4)]
    for value in values:  # a snapshot per record: small files to rewrite
        produce(stack.bootstrap_servers, config["topics"][0], [orjson.dumps(value)], 1)
        run_job(config, spark, dynamodb)
    capsys.readouterr()
    assert cli.main(["iceberg", "maintain", "--config", str(write_config(config, tmp_path / "c.json"))]) == 0
    maintained = [orjson.loads(line)["table"] for line in capsys.readouterr().out.splitlines()]
    assert maintained == sorted(tables[:2])


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        ({"iceberg.tables.dynamic-enabled": "true"}, "iceberg.tables.route-field", "is required"),
        ({"iceberg.tables.route-field": "__table"}, "iceberg.tables.route-field", "and none is set"),
        (
            {
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "__table",
                "behavior.on.null.values": "write",
                "iceberg.tables.upsert-mode-enabled": "true",
                "iceberg.tables.default-id-columns": "id",
            },
            "behavior.on.null.values",
            "a tombstone has no value",
        ),
        (
            {
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "__table",
                "iceberg.tables.upsert-mode-enabled": "true",
            },
            "iceberg.tables.default-id-columns",
            "is required",
        ),
    ],
)
def test_fan_out_settings_are_checked(iceberg_connector, overrides, key, message):
    with pytest.raises(ConfigError) as raised:
        target_for(iceberg_connector(**overrides)).validate()
    assert raised.value.key == key and message in str(raised.value)


def test_iceberg_tables_is_not_read_with_fan_out(connector):
    config = connector(
        **{
            "format.class": "IcebergFormat",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": "sqlite:////tmp/x.db",
            "iceberg.catalog.warehouse": "s3://b/w",
            "iceberg.tables.dynamic-enabled": "true",
            "iceberg.tables.route-field": "t",
        }
    )
    target_for(config).validate()
    assert "tables named by the records' t" in target_for(config).init()[0]
