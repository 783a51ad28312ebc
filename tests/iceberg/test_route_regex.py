"""Static routing by the Iceberg Kafka Connect sink's rule (SinkWriter.routeRecordStatically): with
`iceberg.tables.route-field` and dynamic routing off, each record goes to every table of `iceberg.tables` whose
`iceberg.table.<table>.route-regex` matches the field's whole value (several tables or none); without a route field,
to every table. Exactly once across runs and a crash between two tables' commits, read by pyiceberg, DuckDB's
iceberg extension and our own reader."""

from __future__ import annotations

import orjson
import pytest

from devtools.producer import create_topic, produce
from sink_engine.driver.job import run_job
from sink_engine.failpoints import SimulatedCrash
from sink_engine.target.choice import target_for
from tests.iceberg.runs import crash_after_table_commits, write_config
from tests.iceberg.tables import catalog_of, connector_snapshots, table_view
from tests.iceberg.test_fan_out import read_three_ways
from tests.runs import committed_offsets, past_the_lease

REGIONS = ("eu-west", "us-east", "ap-south", None)  # None: the record has no `region`
REGEXES = {"eu": "eu-.*", "americas": "us-.*|sa-.*", "known": "eu-.*|us-.*", "unrouted": None}
PICKS = {"eu": ("eu-west",), "americas": ("us-east",), "known": ("eu-west", "us-east"), "unrouted": ()}


@pytest.fixture
def regex_routed(stack, iceberg_connector, unique):
    """A connector routing to tables of a fresh namespace (table -> its route-regex, None: none), by `region` unless
    `route_field` is None, over a topic of two partitions; returns (config, namespace)."""

    def build(regexes: dict[str, str | None], route_field: str | None = "region", **overrides):
        namespace = f"lake{unique}"  # no `_`: the connector fixture reads `_` in a key as `.`
        keys = {f"iceberg.table.{namespace}.{t}.route-regex": r for t, r in regexes.items() if r is not None}
        config = iceberg_connector(
            **{
                "iceberg.tables": ",".join(f"{namespace}.{t}" for t in regexes),
                **({"iceberg.tables.route-field": route_field} if route_field else {}),
                **keys,
                **overrides,
            }
        )
        catalog_of(config).create_namespace(namespace)
        create_topic(stack.bootstrap_servers, config["topics"][0], 2)
        return config, namespace

    return build


def row(n: int) -> dict:
    region = REGIONS[n % len(REGIONS)]
    return {"id": n, "name": f"n{n}", "amount": n * 10, **({} if region is None else {"region": region})}


def picked(table: str, count: int) -> list[dict]:
    """Records 0..count-1 that `table`'s regex picks, as the table's rows."""
    rows = (row(n) for n in range(count))
    return [{k: v for k, v in r.items() if k != "region"} for r in rows if r.get("region") in PICKS[table]]


def produced(stack, config, first: int, count: int) -> None:
    produce(
        stack.bootstrap_servers, config["topics"][0], [orjson.dumps(row(n)) for n in range(first, first + count)], 2
    )


def test_records_land_in_every_table_whose_regex_matches_once_across_runs(
    stack, spark, s3, dynamodb, regex_routed, tmp_path, capsys
):
    from sink_engine import cli

    # given `eu`, `americas`, `known` (eu and us) and `unrouted` (no regex)
    config, namespace = regex_routed(REGEXES)
    for run in range(2):
        # given records of four regions (one with no region field) over two partitions
        produced(stack, config, run * 200, 200)
        # when a run writes them
        run_job(config, spark, dynamodb)
        # then each table holds once the records its regex picks (one `eu-west` record in two tables), in one
        # snapshot per run; `ap-south` and region-less records are in none, and no record reaches `unrouted`
        for table, regions in PICKS.items():
            identifier = f"{namespace}.{table}"
            assert read_three_ways(s3, config, identifier) == picked(table, run * 200 + 200)
            snapshots = connector_snapshots(table_view(config, identifier))
            assert len(snapshots) == (run + 1 if regions else 0)
        assert not catalog_of(config).table_exists(f"{namespace}.unrouted")
    # and every record's offset is committed, those routed to no table too
    assert sum(committed_offsets(dynamodb, config).values()) == 400
    # and `iceberg maintain` maintains the listed tables that exist
    capsys.readouterr()
    assert cli.main(["iceberg", "maintain", "--config", str(write_config(config, tmp_path / "c.json"))]) == 0
    maintained = [orjson.loads(line)["table"] for line in capsys.readouterr().out.splitlines()]
    assert maintained == [f"{namespace}.{t}" for t in ("americas", "eu", "known")]


def test_a_crash_between_two_tables_commits_appends_each_record_once(stack, spark, s3, dynamodb, regex_routed):
    # given a run that dies once `americas` and `eu` are committed, before `known` (which shares eu's records): one
    # commit thread, so the tables commit in name order
    config, namespace = regex_routed(REGEXES, **{"iceberg.control.commit.threads": 1})
    produced(stack, config, 0, 120)
    with crash_after_table_commits(2) as committed, pytest.raises(SimulatedCrash):
        run_job(config, spark, dynamodb)
    assert committed == [f"{namespace}.americas", f"{namespace}.eu"] and committed_offsets(dynamodb, config) == {}
    # when more records arrive and the job runs again
    produced(stack, config, 120, 60)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then every table holds each record its regex picks once
    for table in ("americas", "eu", "known"):
        identifier = f"{namespace}.{table}"
        assert read_three_ways(s3, config, identifier) == picked(table, 180), table
        assert len(connector_snapshots(table_view(config, identifier))) == (1 if table == "known" else 2)
    assert sum(committed_offsets(dynamodb, config).values()) == 180


def test_without_a_route_field_every_record_goes_to_every_table(stack, spark, s3, dynamodb, regex_routed):
    # given two tables and no route field, when a run writes records, then each table holds every record
    config, namespace = regex_routed({"first": None, "second": None}, route_field=None)
    values = [row(n) for n in range(50)]
    produce(stack.bootstrap_servers, config["topics"][0], [orjson.dumps(v) for v in values], 2)
    run_job(config, spark, dynamodb)
    expected = [{k: v for k, v in value.items() if k != "region"} for value in values]
    for table in ("first", "second"):
        assert read_three_ways(s3, config, f"{namespace}.{table}") == expected
    assert sum(committed_offsets(dynamodb, config).values()) == 50


def test_static_routing_is_refused_in_continuous_runs(regex_routed_config):
    # given a statically routed connector, then its target refuses continuous runs naming the route field, as
    # fan-out by field is refused (a continuous run's stages hold one table's files)
    continuous = target_for(regex_routed_config).capabilities.continuous
    assert not continuous.supported and continuous.key == "iceberg.tables.route-field"


@pytest.fixture
def regex_routed_config(iceberg_connector, unique):
    return iceberg_connector(
        **{
            "iceberg.tables": f"lake{unique}.a,lake{unique}.b",
            "iceberg.tables.route-field": "region",
            f"iceberg.table.lake{unique}.a.route-regex": "a.*",
        }
    )


def test_init_creates_the_namespace_of_each_listed_table(regex_routed_config, unique):
    # given a statically routed connector over tables of one new namespace, when init runs twice, then it creates
    # the namespace for the first table and finds it for the second, and again finds both
    target = target_for(regex_routed_config)
    assert target.init() == [
        f"namespace of lake{unique}.a in catalog iceberg: created",
        f"namespace of lake{unique}.b in catalog iceberg: exists",
    ]
    assert all(line.endswith("exists") for line in target_for(regex_routed_config).init())
