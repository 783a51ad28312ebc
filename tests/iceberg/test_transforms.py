"""Transforms with IcebergFormat: a RegexRouter sends a topic's records to the routed topic's table, and records a
Filter drops are settled (committed past) without a row."""

from __future__ import annotations

from sink_engine.driver.job import run_job
from sink_engine.target.iceberg_tables.catalog import ensure_namespace, load_table
from tests.iceberg.tables import catalog_of
from tests.runs import committed_offsets

KAFKA = "org.apache.kafka.connect.transforms"


def test_a_regex_router_writes_the_routed_topics_table(new_topic, spark, dynamodb, iceberg_connector, unique):
    # given a table per topic, a RegexRouter events-<u> -> routed-<u>, and a Filter of the records of a topic
    # that is not this one (negated: it drops nothing here)
    config = iceberg_connector(
        **{
            "iceberg.tables": f"lake_{unique}.${{topic}}",
            "transforms": "route,drop",
            "transforms.route.type": f"{KAFKA}.RegexRouter",
            "transforms.route.regex": "events-(.*)",
            "transforms.route.replacement": "routed-$1",
            "transforms.drop.type": f"{KAFKA}.Filter",
            "transforms.drop.predicate": "routed",
            "transforms.drop.negate": "true",
            "predicates": "routed",
            "predicates.routed.type": f"{KAFKA}.predicates.TopicNameMatches",
            "predicates.routed.pattern": "routed-.*",
        }
    )
    topic = config["topics"][0]
    catalog = catalog_of(config)
    ensure_namespace(catalog, f"lake_{unique}.x")
    new_topic(topic, 2, events=50)
    # when the sink runs
    run_job(config, spark, dynamodb)
    # then every record is a row of the routed topic's table, and the source topic has no table
    table = load_table(catalog, f"lake_{unique}.routed_{unique}")
    assert sorted(row["event_id"] for row in table.scan().to_arrow().to_pylist()) == list(range(50))
    assert load_table(catalog, f"lake_{unique}.events_{unique}") is None
    assert committed_offsets(dynamodb, config) == {0: 25, 1: 25}
