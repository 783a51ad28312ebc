"""The namespaces a fan-out connector declares (`iceberg.tables.route-namespaces`, `iceberg.tables.default-namespace`):
parsed with errors naming the key, and held to by a task's router: a bare table name goes to the default namespace, a
table outside the declared ones is a bad record naming its offset and the table."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.partition.fields import FieldError
from sink_engine.target.iceberg_tables.route_namespaces import RouteNamespaces
from sink_engine.target.iceberg_tables.routing import TableRoutes
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.validation import parse_checked_config
from tests.unit.test_iceberg_config import BASE
from tests.unit.test_iceberg_rows import chunk_of

FAN_OUT = {"iceberg.tables": None, "iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "__table"}
ONE_TABLE = {"iceberg.tables": BASE["iceberg.tables"], **dict.fromkeys(list(FAN_OUT)[1:])}


def settings(**overrides) -> IcebergSettings:
    raw = {**BASE, **FAN_OUT, **overrides}
    return IcebergSettings.from_config(parse_checked_config({k: v for k, v in raw.items() if v is not None}))


def test_the_declared_namespaces_are_the_default_one_and_those_listed():
    # given a default namespace and two listed, one of them the default again
    namespaces = settings(
        **{"iceberg.tables.default-namespace": "inventory", "iceberg.tables.route-namespaces": "sales, inventory,hr.eu"}
    ).route_namespaces
    # then the default comes first, each once
    assert namespaces == RouteNamespaces("inventory", ("inventory", "sales", "hr.eu"))


def test_without_either_key_a_fan_out_connector_declares_nothing():
    assert settings().route_namespaces == RouteNamespaces(None, ())


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        (
            {**ONE_TABLE, "iceberg.tables.default-namespace": "inventory"},
            "iceberg.tables.default-namespace",
            "fan-out by field only",
        ),
        (
            {**ONE_TABLE, "iceberg.tables.route-namespaces": "sales"},
            "iceberg.tables.route-namespaces",
            "fan-out by field only",
        ),
        ({"iceberg.tables.route-namespaces": "sales,Inventory"}, "iceberg.tables.route-namespaces", "lower case"),
        ({"iceberg.tables.default-namespace": "Sales"}, "iceberg.tables.default-namespace", "lower case"),
        ({"iceberg.tables.default-namespace": "a..b"}, "iceberg.tables.default-namespace", "is not a namespace"),
        ({"iceberg.tables.route-namespaces": "sales,a b"}, "iceberg.tables.route-namespaces", "is not a namespace"),
    ],
)
def test_namespace_errors_name_the_key(overrides, key, message):
    with pytest.raises(ConfigError) as caught:
        settings(**overrides)
    assert caught.value.key == key and message in str(caught.value)


def routes(**keys) -> TableRoutes:
    iceberg = settings(**keys)
    assert iceberg.route_field is not None
    return TableRoutes(iceberg.route_field, iceberg.route_namespaces)


DECLARED = {"iceberg.tables.default-namespace": "inventory", "iceberg.tables.route-namespaces": "sales"}


def test_a_bare_table_name_goes_to_the_default_namespace_and_a_full_one_as_it_is():
    # given Debezium's bare source table names and full names, in the declared namespaces
    docs = [{"__table": t} for t in ("customers", "Orders", "sales.invoices", "INVENTORY.items")]
    # when the router encodes the chunk
    partitions = routes(**DECLARED).encode(*chunk_of(docs)).as_list(len(docs))
    # then each record's table is in its namespace, lower-cased
    assert partitions == ["inventory.customers", "inventory.orders", "sales.invoices", "inventory.items"]


@pytest.mark.parametrize("table", ["hr.salaries", "inventory_old.items", "sales.eu.invoices"])
def test_a_table_outside_the_declared_namespaces_is_a_bad_record_naming_offset_and_table(table):
    # given a record among others whose table lies in a namespace the connector does not declare
    docs = [{"__table": "customers"}, {"__table": table}, {"__table": "sales.invoices"}]
    # when the router encodes the chunk
    with pytest.raises(FieldError) as caught:
        routes(**DECLARED).encode(*chunk_of(docs, first_offset=40))
    # then it is a bad record naming its offset, the field and the table
    error = caught.value
    assert (error.topic, error.partition, error.offset) == ("t", 0, 41)
    assert f"names table {table}, whose namespace {table.rsplit('.', 1)[0]} is not one" in str(error)
    assert "record t-0@41: field '__table'" in str(error)


def test_without_a_default_namespace_a_bare_name_is_a_bad_record_saying_which_key_names_one():
    with pytest.raises(FieldError) as caught:
        routes(**{"iceberg.tables.route-namespaces": "sales"}).encode(*chunk_of([{"__table": "customers"}]))
    assert caught.value.offset == 10 and "iceberg.tables.default-namespace" in str(caught.value)


def test_with_nothing_declared_any_namespace_is_reached():
    docs = [{"__table": "hr.salaries"}, {"__table": "a.b.c"}]
    assert routes().encode(*chunk_of(docs)).as_list(2) == ["hr.salaries", "a.b.c"]


def test_validate_describes_where_a_fan_out_connectors_records_may_go(tmp_path, capsys, monkeypatch):
    from tests.unit.test_validate_report import validate

    monkeypatch.setenv("CONNECT_BOOTSTRAP_SERVERS", "localhost:9092")
    config = {k: v for k, v in {**BASE, **FAN_OUT, **DECLARED}.items() if v is not None}
    # given a fan-out connector declaring its namespaces, when validated, then the report lists the keys and says
    # where a bare name goes and which namespaces records may reach
    code, out, _ = validate(tmp_path, capsys, config)
    assert code == 0
    assert "iceberg.tables.route-namespaces" in out and "iceberg.tables.default-namespace" in out
    assert "fan-out by field: each record goes to the table its __table names" in out
    assert "a bare table name goes to namespace inventory (iceberg.tables.default-namespace)" in out
    assert "namespaces records may reach: inventory, sales; a table in any other is a bad record" in out
    # and without them, that any namespace is reached and a deployment refuses it
    config = {k: v for k, v in {**BASE, **FAN_OUT}.items() if v is not None}
    _, out, _ = validate(tmp_path, capsys, config)
    assert "a bare table name is a bad record" in out
    assert "namespaces records may reach: any (none declared: synthesis refuses to deploy it" in out
