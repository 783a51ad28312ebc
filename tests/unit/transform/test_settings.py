"""`transforms` / `predicates` parsing: aliases, types, options, predicates, and errors naming the key."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.transform.filter import Filter
from sink_engine.transform.routers import RegexRouter
from sink_engine.transform.settings import TransformSettings
from sink_engine.validation import parse_checked_config
from tests.unit.test_config import BASE

KAFKA = "org.apache.kafka.connect.transforms"


def settings(**keys) -> TransformSettings:
    return TransformSettings.from_config(parse_checked_config({"name": "c1", **BASE, **keys}))


def test_no_transforms_is_an_empty_chain():
    transforms = settings()
    assert not transforms and not transforms.build() and transforms.key_converter is None


def test_a_chain_is_parsed_in_order_with_options_and_predicates():
    transforms = settings(
        **{
            "transforms": "route, drop",
            "predicates": "isOrders",
            "transforms.route.type": f"{KAFKA}.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "copy-$1",
            "transforms.route.unknown.option": "ignored as Connect does",
            "transforms.drop.type": f"{KAFKA}.Filter",
            "transforms.drop.predicate": "isOrders",
            "transforms.drop.negate": "true",
            "predicates.isOrders.type": f"{KAFKA}.predicates.TopicNameMatches",
            "predicates.isOrders.pattern": "orders",
        }
    )
    chain = transforms.build()
    assert [step.alias for step in chain.steps] == ["route", "drop"]
    route, drop = chain.steps
    assert isinstance(route.transform, RegexRouter) and route.predicate is None
    assert isinstance(drop.transform, Filter) and drop.negate and drop.predicate.test is not None
    assert transforms.describe() == [
        f"route: {KAFKA}.RegexRouter",
        f"drop: {KAFKA}.Filter unless isOrders ({KAFKA}.predicates.TopicNameMatches)",
    ]


@pytest.mark.parametrize(
    "keys, key, message",
    [
        ({"transforms": "a"}, "transforms.a.type", "is required"),
        ({"transforms": "a", "transforms.a.type": "com.example.Nope"}, "transforms.a.type", "is not a transform class"),
        ({"transforms": "a, a", "transforms.a.type": f"{KAFKA}.Filter"}, "transforms", "listed twice"),
        (
            {"transforms": "a", "transforms.a.type": f"{KAFKA}.Filter", "transforms.a.predicate": "p"},
            "transforms.a.predicate",
            "not an alias listed in predicates",
        ),
        (
            {
                "transforms": "a",
                "transforms.a.type": f"{KAFKA}.Filter",
                "transforms.a.predicate": "p",
                "predicates": "p",
                "predicates.p.type": f"{KAFKA}.predicates.RecordIsTombstone",
                "transforms.a.negate": "maybe",
            },
            "transforms.a.negate",
            "not a boolean",
        ),
        (
            {"transforms": "a", "transforms.a.type": f"{KAFKA}.Filter", "transforms.a.negate": "false"},
            "transforms.a.negate",
            "names no predicate to negate",
        ),
        ({"predicates": "p"}, "predicates.p.type", "is required"),
        ({"predicates": "p", "predicates.p.type": f"{KAFKA}.Filter"}, "predicates.p.type", "is not a predicate class"),
        (
            {"predicates": "p", "predicates.p.type": f"{KAFKA}.predicates.TopicNameMatches"},
            "predicates.p.pattern",
            "is required",
        ),
        (
            {"transforms": "r", "transforms.r.type": f"{KAFKA}.RegexRouter", "transforms.r.regex": "("},
            "transforms.r.regex",
            "not a valid regular expression",
        ),
    ],
)
def test_a_bad_chain_is_an_error_naming_the_key(keys, key, message):
    # given a config with a bad transform or predicate, when it is validated, then the error names the key
    with pytest.raises(ConfigError) as raised:
        parse_checked_config({"name": "c1", **BASE, **keys})
    assert raised.value.key == key and message in raised.value.reason


ICEBERG = {
    "format.class": "IcebergFormat",
    "iceberg.catalog.type": "sql",
    "iceberg.catalog.uri": "sqlite://",
    "iceberg.catalog.warehouse": "s3://lake/wh",
    "iceberg.tables": "db.${topic}",
}


@pytest.mark.parametrize(
    "keys, key",
    [
        ({"transforms": "t", "transforms.t.type": f"{KAFKA}.TimestampRouter"}, "transforms.t.type"),
        (
            {
                "transforms": "r",
                "transforms.r.type": f"{KAFKA}.RegexRouter",
                "transforms.r.regex": "a",
                "transforms.r.replacement": "b",
                "transforms.r.predicate": "p",
                "predicates": "p",
                "predicates.p.type": f"{KAFKA}.predicates.RecordIsTombstone",
            },
            "transforms.r.predicate",
        ),
    ],
)
def test_iceberg_refuses_a_router_that_splits_a_topic(keys, key):
    with pytest.raises(ConfigError) as raised:
        parse_checked_config({"name": "c1", **BASE, **ICEBERG, **keys})
    assert raised.value.key == key and "one table" in raised.value.reason


def test_validate_prints_the_chain_in_order(tmp_path, capsys):
    import json

    from sink_engine import cli

    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "name": "c1",
                "config": {
                    **BASE,
                    "transforms": "route,drop",
                    "predicates": "tomb",
                    "transforms.route.type": f"{KAFKA}.RegexRouter",
                    "transforms.route.regex": "a",
                    "transforms.route.replacement": "b",
                    "transforms.drop.type": f"{KAFKA}.Filter",
                    "transforms.drop.predicate": "tomb",
                    "predicates.tomb.type": f"{KAFKA}.predicates.RecordIsTombstone",
                },
            }
        )
    )
    assert cli.main(["validate", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        f"transforms, in order:\n  route: {KAFKA}.RegexRouter\n"
        f"  drop: {KAFKA}.Filter if tomb ({KAFKA}.predicates.RecordIsTombstone)\n"
    )
    assert "transforms.route.regex" in out  # the options are listed with the other keys
