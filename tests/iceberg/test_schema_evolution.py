"""Schema evolution of an Iceberg table: a new optional field adds a column, a wider type widens it, any other
change is a record error that the dead-letter queue takes; without evolution new fields are dropped."""

from __future__ import annotations

import orjson
import pytest

from devtools.producer import produce
from sink_engine.driver.job import TaskFailedError, run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import read_dlq_s3
from tests.iceberg.tables import create_namespace, rows, table_name, table_of
from tests.runs import committed_offsets


def envelope(payload: dict, **types: str) -> bytes:
    """A JsonConverter envelope of a struct with these fields (name=Connect type; `?` at the end: optional)."""
    fields = [{"field": name, "type": t.rstrip("?"), "optional": t.endswith("?")} for name, t in types.items()]
    return orjson.dumps({"schema": {"type": "struct", "name": "Order", "fields": fields}, "payload": payload})


@pytest.fixture
def evolving(stack, new_topic, iceberg_connector):
    """Build (config, produce(values)) for a one-partition topic of JsonConverter envelopes."""

    def build(**overrides):
        config = iceberg_connector(
            **{"value.converter.schemas.enable": "true", "iceberg.tables.evolve-schema-enabled": "true", **overrides}
        )
        topic = config["topics"][0]
        create_namespace(config, topic)
        new_topic(topic, 1)
        return config, lambda values: produce(stack.bootstrap_servers, topic, values, 1)

    return build


def columns(config) -> dict[str, str]:
    return {f.name: str(f.field_type) for f in table_of(config).schema().fields}


def test_a_new_optional_field_adds_a_column(spark, dynamodb, evolving):
    config, send = evolving()
    # given records of version 1, then (in the same range) records with a new optional field
    send(
        [envelope({"id": i, "item": f"i{i}"}, id="int32", item="string") for i in range(3)]
        + [
            envelope({"id": i, "item": f"i{i}", "coupon": "SPRING"}, id="int32", item="string", coupon="string?")
            for i in range(3, 5)
        ]
    )
    run_job(config, spark, dynamodb)
    # then the table gained the column, the older rows read it as null
    assert columns(config) == {"id": "int", "item": "string", "coupon": "string"}
    assert sorted((r["id"], r["coupon"]) for r in rows(config)) == [
        (0, None),
        (1, None),
        (2, None),
        (3, "SPRING"),
        (4, "SPRING"),
    ]
    # and the column keeps its field id in later runs: older records still land, their coupon null
    send([envelope({"id": 5, "item": "i5"}, id="int32", item="string")])
    run_job(config, spark, dynamodb)
    assert sorted((r["id"], r["coupon"]) for r in rows(config))[-1] == (5, None)


def test_a_wider_type_widens_the_column(spark, dynamodb, evolving):
    config, send = evolving()
    send(
        [
            envelope({"id": 1, "price": 1.5}, id="int32", price="float32"),
            envelope({"id": 2**40, "price": 1e300}, id="int64", price="float64"),
        ]
    )
    run_job(config, spark, dynamodb)
    assert columns(config) == {"id": "long", "price": "double"}
    assert sorted((r["id"], r["price"]) for r in rows(config)) == [(1, 1.5), (2**40, 1e300)]


def test_an_incompatible_change_is_dead_lettered(spark, s3, dynamodb, evolving):
    config, send = evolving(**{"errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "iceberg-dlq"})
    topic = config["topics"][0]
    # given a record whose field changed from a string to a struct, and one whose number cannot be a string
    send(
        [
            envelope({"id": 1, "item": "a"}, id="int32", item="string"),
            envelope({"id": 2, "item": 7}, id="int32", item="int32"),
            envelope({"id": 3, "item": "c"}, id="int32", item="string"),
        ]
    )
    run_job(config, spark, dynamodb)
    # then the others land, the bad one is dead-lettered naming the table and column, and the offset moves past it
    assert sorted(r["id"] for r in rows(config)) == [1, 3]
    [letter] = read_dlq_s3(s3, BUCKET, f"iceberg-dlq/{topic}/")
    assert (letter["offset"], letter["error"]["class"]) == (1, "TableSchemaError")
    assert "column item" in letter["error"]["message"] and table_name(config, topic) in letter["error"]["message"]
    assert committed_offsets(dynamodb, config) == {0: 3}


def test_without_tolerance_an_incompatible_change_stops_the_run_before_it(spark, dynamodb, evolving):
    config, send = evolving()
    send(
        [envelope({"id": i}, id="int32") for i in range(3)]
        + [envelope({"id": "x"}, id="string")]
        + [envelope({"id": 9}, id="int32")]
    )
    with pytest.raises(TaskFailedError, match=r"record .*-0@3: table .*: column id"):
        run_job(config, spark, dynamodb)
    assert sorted(r["id"] for r in rows(config)) == [0, 1, 2]
    assert committed_offsets(dynamodb, config) == {0: 3}


def test_without_evolution_new_fields_are_dropped_and_wider_values_kept_when_they_fit(spark, s3, dynamodb, evolving):
    config, send = evolving(
        **{
            "iceberg.tables.evolve-schema-enabled": "false",
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "no-evolution-dlq",
        }
    )
    send(
        [
            envelope({"id": 1}, id="int32"),
            envelope({"id": 2, "coupon": "SPRING"}, id="int64", coupon="string?"),
            envelope({"id": 2**40}, id="int64"),
        ]
    )
    run_job(config, spark, dynamodb)
    assert columns(config) == {"id": "int"}
    assert sorted(r["id"] for r in rows(config)) == [1, 2]
    [letter] = read_dlq_s3(s3, BUCKET, f"no-evolution-dlq/{config['topics'][0]}/")
    assert letter["offset"] == 2 and "does not fit" in letter["error"]["message"]


def test_schemaless_json_evolves_by_inference(stack, spark, s3, dynamodb, evolving):
    config, send = evolving(
        **{
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": "json-dlq",
        }
    )
    # given records read together whose `name` is a string, then an object (a conflict: they are inferred apart,
    # never as JSON text), and a whole number written as 4.0
    send(
        [
            orjson.dumps({"n": 1, "name": "a"}),
            orjson.dumps({"n": 2, "name": "b", "tags": ["x"]}),
            orjson.dumps({"n": 3, "name": {"first": "c"}}),
            orjson.dumps({"n": 4.0}),
        ]
    )
    run_job(config, spark, dynamodb)
    # then the first records decided the columns (tags added by the second), the object is dead-lettered, and the
    # whole number fits the long column
    assert columns(config) == {"n": "long", "name": "string", "tags": "list<string>"}
    assert sorted((r["n"], r["name"], r["tags"]) for r in rows(config)) == [
        (1, "a", None),
        (2, "b", ["x"]),
        (4, None, None),
    ]
    [letter] = read_dlq_s3(s3, BUCKET, f"json-dlq/{config['topics'][0]}/")
    assert letter["offset"] == 2 and letter["error"]["class"] == "TableSchemaError"
