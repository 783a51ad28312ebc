"""For each partitioner and format, the Glue table the stack synthesizes, read as Athena reads it (tests/catalog/
athena.py: the same partition projection and columns, DuckDB over a local copy of the bucket), returns every record
the engine landed, with its partition columns.

One environment is synthesized with a connector per (partitioner, format) over one schemaless JSON topic, a
registry Avro topic per format and a StringConverter topic per columnar format; the records land with the engine's
own range runs (sink_engine.target.s3_objects.output.run_range, no Spark) on the local broker and moto's S3.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import orjson
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from devtools.producer import REGIONS, produce
from infra.connectors import _load
from infra.constructs.catalog import DATA_OBJECTS_PARAMETER, table_name
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from sink_engine.model import PartitionRange
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task.settings import TaskSettings
from tests.catalog.athena import ProjectedTable
from tests.conftest import BUCKET
from tests.deployed.template import Templates
from tests.s3_reader import list_keys
from tests.schema_registry_server import SchemaRegistryServer

SUFFIX = uuid.uuid4().hex[:6]
CLICKS, ORDERS, LINES = f"clicks-{SUFFIX}", f"orders-{SUFFIX}", f"lines-{SUFFIX}"
PARTITIONS, COUNT = 2, 40
BASE_MS = int(datetime(2024, 10, 26, 20, tzinfo=UTC).timestamp() * 1000)  # Paris falls back on the 27th
STEP_MS = 47 * 60_000
QUERY_TIME = datetime(2024, 10, 29, tzinfo=UTC)  # NOW for the date projections
USERS = [f"u{n}" for n in range(5)]


def click(i: int) -> dict:
    return {
        "id": i,
        "region": REGIONS[i % 3],
        "at": BASE_MS + i * STEP_MS,
        "user": {"name": USERS[i % 5], "tier": i % 2},
        "tags": [f"t{i % 4}"],
        "score": i * 1.5,
        "ok": i % 2 == 0,
    }


CLICK_COLUMNS = {
    "id": "long",
    "region": "string",
    "at": "long",
    "user": {
        "type": "record",
        "name": "User",
        "fields": [{"name": "name", "type": "string"}, {"name": "tier", "type": "long"}],
    },
    "tags": {"type": "array", "items": "string"},
    "score": "double",
    "ok": "boolean",
}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}],
                },
            },
        },
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def order(i: int) -> dict:
    return {
        "id": i,
        "customer": f"c{i % 3}",
        "amount": i + 0.25,
        "placed": datetime.fromtimestamp(BASE_MS / 1000 + i * 60, UTC),
        "day": date(2024, 10, 1) + timedelta(days=i),
        "status": "PAID" if i % 2 else "NEW",
        "lines": [{"sku": f"s{i}", "qty": i}],
        "note": None if i % 3 else f"n{i}",
    }


def local(e: dict, zone: str) -> datetime:
    return datetime.fromtimestamp(e["at"] / 1000, ZoneInfo(zone))


RECORD_TIME = {"timestamp.extractor": "RecordField", "timestamp.field": "at"}
# partitioner keys, and the partition columns each click must have (computed here, independently of the engine)
PARTITIONERS = {
    "default": ({}, lambda i, e: {"partition": i % PARTITIONS}),
    "field": (
        {"partitioner.class": "FieldPartitioner", "partition.field.name": "user.name"},
        lambda i, e: {"user_name": e["user"]["name"]},
    ),
    "time": (
        {
            "partitioner.class": "TimeBasedPartitioner",
            "path.format": "'dt'=YYYY-MM-dd/'h'=HH",
            "partition.duration.ms": 7_200_000,
            "timezone": "Europe/Paris",
            **RECORD_TIME,
        },
        lambda i, e: {
            "time_bucket": f"dt={local(e, 'Europe/Paris'):%Y-%m-%d}/h={local(e, 'Europe/Paris').hour // 2 * 2:02d}"
        },
    ),
    "daily": (
        {"partitioner.class": "DailyPartitioner", "timezone": "America/New_York", **RECORD_TIME},
        lambda i, e: {"time_bucket": f"year={local(e, 'America/New_York'):%Y/month=%m/day=%d}"},
    ),
    "hourly": (
        {"partitioner.class": "HourlyPartitioner", "timezone": "Europe/Paris", **RECORD_TIME},
        lambda i, e: {"time_bucket": f"year={local(e, 'Europe/Paris'):%Y/month=%m/day=%d/hour=%H}"},
    ),
    "field and time": (
        {
            "partitioner.class": "FieldAndTimeBasedPartitioner",
            "partition.field.name": "region",
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
            "partition.duration.ms": 86_400_000,
            **RECORD_TIME,
        },
        lambda i, e: {"region": e["region"], "time_bucket": f"year={local(e, 'UTC'):%Y/month=%m/day=%d}"},
    ),
}
FORMATS = {
    "parquet": {"format.class": "ParquetFormat"},
    "avro": {"format.class": "AvroFormat"},
    "json": {"format.class": "JsonFormat"},
    "json gzip": {"format.class": "JsonFormat", "s3.compression.type": "gzip"},
    "block gzip": {"format.class": "BlockGzipFormat", "format.blockgzip.block.size": 300},
}
AVRO_INPUT = {"value.converter": "AvroConverter"}
# name -> (topic, connector keys)
CONNECTORS = {
    **{
        f"{p} {f}": (
            CLICKS,
            {
                **PARTITIONERS[p][0],
                **FORMATS[f],
                "value.converter": "JsonConverter",
                "value.converter.schemas.enable": "false",
            },
        )
        for p in PARTITIONERS
        for f in FORMATS
    },
    **{f"registry {f}": (ORDERS, {**FORMATS[f], **AVRO_INPUT}) for f in ("parquet", "avro", "json")},
    **{f"string {f}": (LINES, {**FORMATS[f], "value.converter": "StringConverter"}) for f in ("parquet", "avro")},
}


def slug(name: str) -> str:
    return name.replace(" ", "-")


@pytest.fixture(scope="module")
def registry():
    with SchemaRegistryServer() as server:
        yield server


@pytest.fixture(scope="module")
def deployment(stack, registry, tmp_path_factory):
    """The environment synthesized with every connector of CONNECTORS: (settings, specs by name, tables by name)."""
    from infra import application
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    doc = copy.deepcopy(json.loads((ENVIRONMENTS_DIR / "dev.json").read_text()))
    doc.update(bucket_name=BUCKET, kafka_partitions=PARTITIONS)
    doc["emr"]["concurrent_runs"] = 1  # dev's capacity holds a few runs, not one per connector here: the rest queue
    doc["msk"]["topics"] = [CLICKS, ORDERS, LINES]
    doc["catalog"].update(
        time_range_start="2024-10-25",
        tables={
            CLICKS: {"columns": CLICK_COLUMNS, "field_values": {"region": list(REGIONS)}},
            ORDERS: {"schema": ORDER},
        },
    )
    settings = parse_settings("dev", doc, "dev.json")
    folder = tmp_path_factory.mktemp("connectors")
    specs = {}
    for name, (topic, keys) in CONNECTORS.items():
        document = {
            "name": f"athena-{slug(name)}",
            "config": {
                "topics": topic,
                "bootstrap.servers": stack.bootstrap_servers,
                "s3.bucket.name": BUCKET,
                "s3.region": settings.region,
                "topics.dir": f"athena-{SUFFIX}/{slug(name)}",
                "flush.size": 5,
                "offset.storage.dynamodb.table": settings.table_name,
                "sink.kafka.timeout.ms": 20000,
                **keys,
            },
        }
        if keys["value.converter"] == "AvroConverter":
            document["config"]["value.converter.schema.registry.url"] = registry.url
        path = folder / f"{slug(name)}.json"
        path.write_text(json.dumps(document))
        specs[name] = _load(path, settings)
    outdir = tmp_path_factory.mktemp("cdk-athena")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(application, "load_settings", lambda env: settings)
        app = application.new_app(str(outdir))
        built = application.build(app, "dev", tuple(specs.values()))
        app.synth()
    stack_name = built.service.stack_name
    templates = Templates(
        {stack_name: json.loads((outdir / f"{stack_name}.template.json").read_text())},
        settings.account,
        settings.region,
    )
    tables = {}
    for stack_name, _, resource in templates.resources("AWS::Glue::Table"):
        table_input = templates.resolve(stack_name, resource["Properties"]["TableInput"], {})
        tables[table_input["Name"]] = table_input
    return settings, specs, tables


@pytest.fixture(scope="module")
def landed(stack, new_topic, registry, deployment, s3, tmp_path_factory):
    """Every connector's records landed by the engine; the bucket copied to a folder under the same keys."""
    _, specs, _ = deployment
    for topic in (CLICKS, ORDERS, LINES):
        new_topic(topic, PARTITIONS)
    produce(stack.bootstrap_servers, CLICKS, [orjson.dumps(click(i)) for i in range(COUNT)], PARTITIONS)
    serialize = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(ORDER))
    context = SerializationContext(ORDERS, MessageField.VALUE)
    produce(stack.bootstrap_servers, ORDERS, [serialize(order(i), context) for i in range(COUNT)], PARTITIONS)
    produce(stack.bootstrap_servers, LINES, [f"line {i}".encode() for i in range(COUNT)], PARTITIONS)
    for spec in specs.values():
        config = spec.config
        for partition in range(PARTITIONS):
            result = run_range(
                TaskSettings.from_config(config),
                PartitionRange(spec.topics[0], partition, 0, COUNT // PARTITIONS, None),
            )
            assert result.error is None and result.next_offset == COUNT // PARTITIONS, (spec.name, result.error)
    root = tmp_path_factory.mktemp("bucket")
    for key in list_keys(s3, BUCKET, f"athena-{SUFFIX}/"):
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    return root


def table_of(deployment, name: str) -> dict:
    _, specs, tables = deployment
    spec = specs[name]
    return tables[table_name(spec.name, spec.topics[0])]


def select(table: ProjectedTable, injected_values: dict[str, list[str]], path_regex: str | None = None) -> list[dict]:
    """SELECT * with one query per value of each injected column (Athena needs one), results together."""
    names = list(injected_values)
    if not names:
        return table.select(QUERY_TIME, path_regex=path_regex)
    (name,) = names
    return [row for value in injected_values[name] for row in table.select(QUERY_TIME, {name: value}, path_regex)]


@pytest.mark.parametrize("partitioner", list(PARTITIONERS))
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_table_returns_every_landed_click_with_its_partition_columns(deployment, landed, java_time, partitioner, fmt):
    table_input = table_of(deployment, f"{partitioner} {fmt}")
    table = ProjectedTable(table_input, landed, java_time)
    injected = {"user_name": USERS} if partitioner == "field" else {}
    rows = select(table, injected)
    data_objects = select(table, injected, table_input["Parameters"][DATA_OBJECTS_PARAMETER])
    partition_columns = [name for name, _ in table.partition_keys]
    expected = sorted(
        (i, tuple(PARTITIONERS[partitioner][1](i, click(i))[c] for c in partition_columns)) for i in range(COUNT)
    )
    # then with only the data objects every click is there once, under its partition values, every column read
    assert sorted((r["id"], tuple(r[c] for c in partition_columns)) for r in data_objects) == expected
    for name, _ in table.columns:
        assert any(r[name] is not None for r in data_objects), f"column {name} is never read"
    assert all(r["user"]["name"] == click(r["id"])["user"]["name"] for r in data_objects)
    if "region" in partition_columns:  # the field's own column gives way to the partition column
        assert "region" not in dict(table.columns)
    # and the whole table is that, but for Block-GZIP's index objects: one row of nulls each, as Athena reads them
    index_objects = sorted({r["$path"] for r in rows if r["$path"].endswith(".index.json")})
    assert bool(index_objects) == (fmt == "block gzip")
    assert [r for r in rows if not r["$path"].endswith(".index.json")] == data_objects
    assert all(all(r[name] is None for name, _ in table.columns) for r in rows if r["$path"] in index_objects)
    assert len(rows) == len(data_objects) + len(index_objects)


@pytest.mark.parametrize("fmt", ["parquet", "avro", "json"])
def test_registry_topic_table_has_the_schema_columns_typed_as_each_format_holds_them(
    deployment, landed, java_time, fmt
):
    table = ProjectedTable(table_of(deployment, f"registry {fmt}"), landed, java_time)
    rows = sorted(table.select(QUERY_TIME), key=lambda r: r["id"])
    assert [(r["id"], r["partition"]) for r in rows] == [(i, i % PARTITIONS) for i in range(COUNT)]
    first = order(1)
    placed_ms = int(first["placed"].timestamp() * 1000)
    day_number = (first["day"] - date(1970, 1, 1)).days
    as_written = {
        "parquet": (first["placed"], first["day"]),
        "avro": (first["placed"], first["day"]),
        "json": (placed_ms, day_number),
    }[fmt]
    assert (rows[1]["placed"], rows[1]["day"]) == as_written
    assert (rows[1]["status"], rows[1]["lines"], rows[1]["note"], rows[3]["note"]) == (
        "PAID",
        [{"sku": "s1", "qty": 1}],
        None,
        "n3",
    )
    assert dict(table.columns)["placed"] == ("bigint" if fmt == "json" else "timestamp")


@pytest.mark.parametrize("fmt", ["parquet", "avro"])
def test_string_values_are_one_value_column(deployment, landed, java_time, fmt):
    table = ProjectedTable(table_of(deployment, f"string {fmt}"), landed, java_time)
    assert table.columns == [("value", "string")]
    rows = table.select(QUERY_TIME)
    assert sorted((r["value"], r["partition"]) for r in rows) == sorted(
        (f"line {i}", i % PARTITIONS) for i in range(COUNT)
    )
