"""Protobuf and JSON Schema topics end to end (real broker, moto, local Spark, the test registry): records of
two schema versions, serialized by confluent-kafka's own serializers, land as Parquet, Avro and JSON with typed
columns (nested, repeated, maps, oneofs, references, timestamps, dates, decimals), BACKWARD projection, and
registry-encoded keys beside them; read back with pyarrow, duckdb and fastavro."""

from __future__ import annotations

import io
import json

import duckdb
import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from confluent_kafka.serialization import MessageField

from devtools.producer import produce
from sink_engine.convert.connect_json import to_json
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.registry_topics import JsonSchemaTopic, ProtobufTopic, created_at, order_fields
from tests.runs import committed_offsets
from tests.s3_reader import list_keys, read_json_lines
from tests.schema_registry_server import SchemaRegistryServer

# Record versions by offset, flush.size 3, BACKWARD: offsets 0-1 (v1; the v2 record closes them), 2-4 (v2, then
# two v1 records projected up to v2), 5-7 (v1: a file starts with the schema of its first record).
VERSIONS = [1, 1, 2, 1, 1, 1, 1, 1]
FILES = {0: (1, [0, 1]), 2: (2, [2, 3, 4]), 5: (1, [5, 6, 7])}  # start offset: (file schema version, offsets)
FORMATS = {
    "parquet": ("ParquetFormat", ".snappy.parquet"),
    "avro": ("AvroFormat", ".avro"),
    "json": ("JsonFormat", ".json"),
}
ONE_OF = "io.confluent.connect.json.OneOf.field."


@pytest.fixture(scope="module")
def registry():
    with SchemaRegistryServer() as server:
        yield server


def protobuf_row(i: int, file_version: int) -> dict:
    """What offset i holds in a file of `file_version`, as Connect values (ProtobufData's mapping)."""
    f = order_fields(i)
    row = {
        "id": i,
        "status": f["status"],
        "lines": f["lines"],
        "tags": dict(sorted(f["tags"].items())),
        "payment_0": {"card": f["card"], "voucher": None if f["card"] else f"v{i}"},
        "ship_to": f["ship_to"],
        "created_at": f["created_at"],
        "discount": {"value": i} if i % 2 else None,
        "delivery": f["delivery"],
        "total": f["total"],
        "coupon": None,
    }
    if file_version == 2:
        row["channel"] = "app" if VERSIONS[i] == 2 else None
    return row


def json_schema_row(i: int, file_version: int) -> dict:
    """The same for the JSON Schema topic (JsonSchemaData's mapping; date-time and date typed)."""
    document, f = JsonSchemaTopic.document(i, VERSIONS[i]), order_fields(i)
    payment = document["payment"]
    row = {
        "id": i,
        "status": f["status"],
        "lines": f["lines"],
        "tags": document["tags"],
        "payment": {
            f"{ONE_OF}0": payment if isinstance(payment, str) else None,
            f"{ONE_OF}1": payment if isinstance(payment, dict) else None,
        },
        "ship_to": f["ship_to"],
        "created_at": created_at(i),
        "delivery": f["delivery"] if i % 2 == 0 else None,
        "total": f["total"],
    }
    if file_version == 2:
        row["channel"] = "app" if VERSIONS[i] == 2 else "web"  # the v2 default
    return row


INPUTS = {
    # input: (value topic class, converter, expected row, key topic class, key converter, typed columns in DuckDB)
    "protobuf": (
        ProtobufTopic,
        "io.confluent.connect.protobuf.ProtobufConverter",
        protobuf_row,
        JsonSchemaTopic,
        "io.confluent.connect.json.JsonSchemaConverter",
        {
            "created_at": "TIMESTAMP WITH TIME ZONE",
            "delivery": "DATE",
            "total": "DECIMAL(10,2)",
            "tags": "MAP(VARCHAR, INTEGER)",
            "lines": "STRUCT(sku VARCHAR, qty INTEGER)[]",
            "payment_0": "STRUCT(card VARCHAR, voucher VARCHAR)",
            "status": "VARCHAR",
        },
    ),
    "jsonschema": (
        JsonSchemaTopic,
        "io.confluent.connect.json.JsonSchemaConverter",
        json_schema_row,
        ProtobufTopic,
        "io.confluent.connect.protobuf.ProtobufConverter",
        {
            "created_at": "TIMESTAMP WITH TIME ZONE",
            "delivery": "DATE",
            "total": "DECIMAL(10,2)",
            "tags": "MAP(VARCHAR, BIGINT)",
            "lines": "STRUCT(sku VARCHAR, qty BIGINT)[]",
            "ship_to": "STRUCT(street VARCHAR, city VARCHAR)",
        },
    ),
}


@pytest.mark.parametrize("input_name", sorted(INPUTS))
def test_registry_topic_lands_typed_in_every_format(
    stack, new_topic, spark, s3, dynamodb, connector, registry, unique, tmp_path, input_name
):
    values_of, converter, expected_row, keys_of, key_converter, duckdb_types = INPUTS[input_name]
    # given records of v1 and v2 with registry-encoded keys (the other kind of schema)
    topic = f"events-{unique}"
    values, keys = values_of(registry.url, topic), keys_of(registry.url, topic, MessageField.KEY)
    new_topic(topic, 1)
    produce(
        stack.bootstrap_servers,
        topic,
        [values.value(i, v) for i, v in enumerate(VERSIONS)],
        1,
        keys=[keys.value(i) for i in range(len(VERSIONS))],
    )
    for name, (format_class, extension) in FORMATS.items():
        # when a connector of each format sinks the topic
        config = connector(
            **{
                "name": f"conn-{unique}-{name}",
                "topics.dir": name,
                "format.class": format_class,
                "value.converter": converter,
                "value.converter.schema.registry.url": registry.url,
                "key.converter": key_converter,
                "key.converter.schema.registry.url": registry.url,
                "store.kafka.keys": "true",
                "keys.format.class": "ParquetFormat",
                "schema.compatibility": "BACKWARD",
                "flush.size": 3,
            }
        )
        run_job(config, spark, dynamodb)
        # then each file holds its records, projected to its schema, typed in the format
        prefix = f"{name}/{topic}/partition=0/"
        data = [k for k in list_keys(s3, BUCKET, prefix) if ".keys." not in k]
        assert data == [f"{prefix}{topic}+0+{start:010d}{extension}" for start in FILES]
        assert committed_offsets(dynamodb, config) == {0: len(VERSIONS)}
        for key, (version, offsets) in zip(data, FILES.values()):
            expected = [expected_row(i, version) for i in offsets]
            READERS[name](s3, key, expected, duckdb_types, tmp_path)
            key_rows = pq.read_table(io.BytesIO(body(s3, key.replace(extension, ".keys.snappy.parquet")))).to_pylist()
            assert [row["key"]["id"] for row in key_rows] == offsets


def body(s3, key: str) -> bytes:
    return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()


def check_parquet(s3, key: str, expected: list, duckdb_types: dict, tmp_path) -> None:
    path = tmp_path / key.rsplit("/", 1)[1]
    path.write_bytes(body(s3, key))
    table = pq.read_table(path)
    maps = [f.name for f in table.schema if pa.types.is_map(f.type)]
    assert [{k: dict(v) if k in maps else v for k, v in row.items()} for row in table.to_pylist()] == expected
    described = {row[0]: row[1] for row in duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()}
    assert {column: described[column] for column in duckdb_types} == duckdb_types
    rows = duckdb.sql(
        f"SELECT id, created_at, delivery, total, ship_to.city, lines[1].sku FROM read_parquet('{path}') ORDER BY id"
    ).fetchall()
    assert rows == [
        (r["id"], r["created_at"], r["delivery"], r["total"], "Springfield", f"s{r['id']}") for r in expected
    ]


def check_avro(s3, key: str, expected: list, duckdb_types: dict, tmp_path) -> None:
    reader = fastavro.reader(io.BytesIO(body(s3, key)))
    fields = {
        f["name"]: f["type"][-1] if isinstance(f["type"], list) else f["type"]  # the non-null branch
        for f in reader.writer_schema["fields"]
    }
    assert fields["delivery"] == {"type": "int", "logicalType": "date"}
    assert fields["total"] == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    assert fields["tags"]["type"] == "map" and fields["lines"]["type"] == "array"
    assert fields["created_at"]["logicalType"] in ("timestamp-millis", "timestamp-micros")
    renamed = [{k.replace(".", "_"): v for k, v in row.items()} for row in expected]
    for row in renamed:  # Avro names: the oneOf branch fields' dots become underscores
        if "payment" in row:
            row["payment"] = {k.replace(".", "_"): v for k, v in row["payment"].items()}
    assert list(reader) == renamed


def check_json(s3, key: str, expected: list, duckdb_types: dict, tmp_path) -> None:
    lines = read_json_lines(s3, BUCKET, key)
    # Connect's JsonConverter output; JSON Schema's date-time and date strings are written as the record had them
    texts = {i: JsonSchemaTopic.document(i) for i in (row["id"] for row in expected)}
    wanted = []
    for row in expected:
        row = dict(row)
        if "payment" in row:  # JSON Schema input
            row["created_at"], row["delivery"] = texts[row["id"]]["created_at"], texts[row["id"]]["delivery"]
        wanted.append(json.loads(to_json(row)))
    assert lines == wanted


READERS = {"parquet": check_parquet, "avro": check_avro, "json": check_json}
