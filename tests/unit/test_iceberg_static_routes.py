"""Static routing (`iceberg.tables` with `iceberg.tables.route-field` and `iceberg.table.<table>.route-regex`,
dynamic routing off), by the Iceberg Kafka Connect sink's rule (SinkWriter.routeRecordStatically): every table whose
regex matches the field's whole value, several or none; without a route field, every table."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.validation import parse_checked_config
from tests.unit.test_iceberg_config import BASE

TABLES = "lake.eu,lake.us,lake.all,lake.unrouted"
REGEXES = {
    "iceberg.table.lake.eu.route-regex": "eu-.*",
    "iceberg.table.lake.us.route-regex": "us-.*",
    "iceberg.table.lake.all.route-regex": ".*",
}


def settings(**overrides) -> IcebergSettings:
    raw = {**BASE, "iceberg.tables": TABLES, "iceberg.tables.route-field": "region", **REGEXES, **overrides}
    return IcebergSettings.from_config(parse_checked_config({k: v for k, v in raw.items() if v is not None}))


def test_a_value_goes_to_every_table_whose_regex_matches_it_whole():
    # given regexes for three of four tables, when values are routed, then each goes to the tables whose regex
    # matches all of it (the table without a regex takes none)
    routes = settings().static_routes
    assert routes is not None and settings().routed and settings().table_template is None
    assert routes.tables_for("eu-west") == ("lake.eu", "lake.all")
    assert routes.tables_for("us-east") == ("lake.us", "lake.all")
    assert routes.tables_for("xeu-west") == ("lake.all",)  # a full match: `eu-.*` does not match inside


def test_a_value_no_regex_matches_goes_to_no_table():
    routes = settings(**{"iceberg.table.lake.all.route-regex": "all"}).static_routes
    assert routes is not None
    assert routes.tables_for("ap-south") == ()
    assert routes.tables_for("EU-west") == ()  # case-sensitive, as Java's Pattern
    assert routes.tables_for(None) == ()  # the field missing or null


def test_without_a_route_field_every_record_goes_to_every_table():
    routes = settings(**{"iceberg.tables.route-field": None, **dict.fromkeys(REGEXES)}).static_routes
    assert routes is not None and routes.field is None
    assert routes.tables_for(None) == ("lake.eu", "lake.us", "lake.all", "lake.unrouted")


def test_one_table_without_a_route_field_is_not_routed():
    config = settings(**{"iceberg.tables": "lake.events", "iceberg.tables.route-field": None, **dict.fromkeys(REGEXES)})
    assert config.static_routes is None and not config.routed and config.table_template == "lake.events"


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        ({"iceberg.table.lake.eu.route-regex": "eu-("}, "iceberg.table.lake.eu.route-regex", "not a regular expr"),
        ({"iceberg.table.lake.ap.route-regex": "ap-.*"}, "iceberg.table.lake.ap.route-regex", "does not list"),
        (
            {"iceberg.tables.route-field": None},
            "iceberg.table.lake.eu.route-regex",
            "only with iceberg.tables.route-field",
        ),
        (
            {"iceberg.tables.dynamic-enabled": "true"},
            "iceberg.table.lake.eu.route-regex",
            "iceberg.tables.dynamic-enabled=false",
        ),
        ({"iceberg.tables": "lake.eu,lake_${topic}.x"}, "iceberg.tables", "is not `namespace.table`"),
        ({"iceberg.tables": "lake.eu,orders"}, "iceberg.tables", "is not `namespace.table`"),
        ({**dict.fromkeys(REGEXES)}, "iceberg.tables.route-field", "and none is set"),
        (
            {"iceberg.tables.upsert-mode-enabled": "true", "iceberg.table.lake.eu.id-columns": "id"},
            "iceberg.table.lake.us.id-columns",
            "an upsert table needs id columns",
        ),
    ],
)
def test_static_routing_errors_name_the_key(overrides, key, message):
    with pytest.raises(ConfigError) as caught:
        settings(**overrides)
    assert caught.value.key == key and message in str(caught.value)


def test_upsert_tables_routed_statically_take_their_id_columns():
    upsert = settings(
        **{
            "iceberg.tables.upsert-mode-enabled": "true",
            "iceberg.tables.default-id-columns": "id",
            "behavior.on.null.values": "ignore",  # a tombstone has no value to route by
        }
    )
    assert upsert.upsert is not None and upsert.upsert.id_columns("lake.eu") == ("id",)


def test_a_chunks_records_are_encoded_with_their_tables():
    from sink_engine.partition.fields import FieldError
    from sink_engine.target.iceberg_tables.routing import StaticTableRoutes, tables_of
    from tests.unit.test_iceberg_rows import chunk_of

    # given a nested route field, and values that are text, a number, a boolean, null and missing
    routes = settings(
        **{
            "iceberg.tables.route-field": "where.region",
            "iceberg.table.lake.us.route-regex": "us-.*|7|true",
        }
    ).static_routes
    assert routes is not None
    docs = [{"where": {"region": r}} for r in ("eu-west", "us-east", 7, True, None)] + [{"where": {}}]
    # when the partitioner encodes the chunk, then each record's tables are those its value's text picks
    partitions = StaticTableRoutes(routes).encode(*chunk_of(docs))
    assert [tables_of(p) for p in partitions.as_list(len(docs))] == [
        ("lake.eu", "lake.all"),
        ("lake.us", "lake.all"),
        ("lake.us", "lake.all"),
        ("lake.us", "lake.all"),
        (),
        (),
    ]
    # and a map is a bad record naming the field and its offset
    with pytest.raises(FieldError) as caught:
        StaticTableRoutes(routes).encode(*chunk_of([{"where": {"region": "eu-west"}}, {"where": {"region": {}}}]))
    assert caught.value.offset == 11 and "where.region" in str(caught.value)
