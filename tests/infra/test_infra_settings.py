"""A bad or missing setting, or a connector config that does not fit its environment, fails naming the culprit."""

import copy
import dataclasses
import json
import shutil
import tomllib
from pathlib import Path

import pytest

from infra.connectors import ignored_key_warnings, load_connectors
from infra.errors import ConnectorSpecError, SettingsError
from infra.settings import (
    ENGINE_PYTHON,
    ENVIRONMENTS_DIR,
    ConnectorPolicy,
    RestoreSettings,
    load_settings,
    parse_settings,
)

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())


def _without(doc: dict, path: str) -> dict:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node = doc
    for part in parents:
        node = node[part]
    del node[last]
    return doc


def _with(doc: dict, path: str, value) -> dict:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node = doc
    for part in parents:
        node = node[part]
    node[last] = value
    return doc


def test_the_oldest_python_deployed_is_the_engines_requires_python():
    declared = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["requires-python"]
    assert declared == ">=" + ".".join(map(str, ENGINE_PYTHON))


@pytest.mark.parametrize(
    "path",
    [
        "account",
        "region",
        "msk.cluster_arn",
        "msk.topics",
        "network.subnet_ids",
        "emr.release_label",
        "emr.max_capacity.cpu",
        "trigger.backoff_base_seconds",
        "retention.glacier_after_days",
        "catalog.database",
        "catalog.time_range_start",
        "bucket_name",
        "protect_data",
        "iceberg.maintenance_schedule",
    ],
)
def test_missing_setting_is_named(path):
    with pytest.raises(SettingsError, match=f"setting '{path}' in dev.json: is required"):
        parse_settings("dev", _without(DEV, path), "dev.json")


@pytest.mark.parametrize(
    "path, value",
    [
        ("account", "1234"),
        ("msk.cluster_arn", "arn:aws:kafka:eu-west-1:111111111111:topic/x"),
        ("network.security_group_ids", ["sg-nothex!"]),
        ("emr.architecture", "SPARC"),
        ("emr.python", "3.12"),
        ("emr.release_label", "emr-6.15.0"),
        ("retention.deep_archive_after_days", 100),
        ("retention.log_retention_days", 42),
        ("trigger.batch_size", 0),
        ("trigger.connectors_per_run", 0),
        ("trigger.connectors_per_run", 512),  # entryPointArguments' 1,024 items hold `run` and 511 `--config URI`
        ("catalog.tables", {"unknown-topic": {"columns": {"a": "string"}}}),
        ("catalog.tables", {"orders": {"columns": {"a": "strng"}}}),
        ("catalog.tables", {"orders": {"schema": {"type": "array", "items": "long"}}}),
        ("catalog.tables", {"orders": {"columns": {"a": "long"}, "field_values": {"region": "eu"}}}),
        ("catalog.time_range_start", "2026-13-01"),
        ("connectors.refuse_ignored_keys", "yes"),
        ("connectors.refuse_unknown", True),
        ("connector_stacks", -1),
        ("connector_stacks", 201),
        ("connector_stacks", "4"),
    ],
)
def test_malformed_setting_is_named(path, value):
    with pytest.raises(SettingsError) as failed:
        parse_settings("dev", _with(DEV, path, value), "dev.json")
    assert failed.value.setting.startswith(path)


def test_connectors_per_run_is_read_and_defaults_to_25():
    assert (
        parse_settings("dev", _with(DEV, "trigger.connectors_per_run", 511), "dev.json").trigger.connectors_per_run
        == 511
    )
    assert parse_settings("dev", DEV, "dev.json").trigger.connectors_per_run == 25


def test_cluster_in_another_region_is_refused():
    arn = DEV["msk"]["cluster_arn"].replace("eu-west-1", "us-east-1")
    with pytest.raises(SettingsError, match="'msk.cluster_arn'.*account and region"):
        parse_settings("dev", _with(DEV, "msk.cluster_arn", arn), "dev.json")


@pytest.mark.parametrize("env", [None, "", "staging"])
def test_missing_or_unknown_env_names_the_context_value(env):
    with pytest.raises(SettingsError, match="setting 'env' in cdk context"):
        load_settings(env)


@pytest.fixture
def scratch_env(tmp_path):
    """A copy of the dev environment (settings and connectors) that a test may break."""
    environments = tmp_path / "environments"
    environments.mkdir()
    shutil.copy(ENVIRONMENTS_DIR / "dev.json", environments / "dev.json")
    settings = load_settings("dev", environments)
    connectors = tmp_path / "connectors"
    shutil.copytree(settings.connectors_dir, connectors)
    return settings, connectors


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("s3.bucket.name", "someone-elses-bucket", "this environment deploys"),
        ("offset.storage.dynamodb.table", "other-table", "this environment deploys"),
        ("topics", "orders,unknown", "not in the environment's msk.topics"),
        ("flush.size", "0", "must be at least 1"),
        ("format.class", "com.example.NoSuchFormat", "not a class this engine knows"),
        ("errors.deadletterqueue.s3.prefix", "dlq", "must be 'dlq/orders-s3-sink'"),
        ("s3.acl.canned", "public-read", "the data-lake bucket disables ACLs"),
        (
            "consumer.override.sasl.jaas.config",
            'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";',
            "holds a credential",
        ),
        ("value.converter.basic.auth.user.info", "user:secret", "holds a credential"),
        ("aws.secret.access.key", "wJalrXUtnFEMI/K7MDENG", "holds a credential in clear text"),
        ("value.converter.schema.registry.url", "https://reader:pw@registry:8081", "holds a credential in clear text"),
        ("s3.wan.mode", "true", "S3 Transfer Acceleration is not supported"),
        ("value.converter.basic.auth.user.info", "user:${secrets:sr:}", "names no JSON key"),
        ("name", "_index", "reserved for the admin's own objects under _connectors/"),
    ],
)
def test_connector_that_does_not_fit_names_file_and_key(scratch_env, monkeypatch, key, value, message):
    settings, folder = scratch_env
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    document["config"][key] = value
    path.write_text(json.dumps(document))
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    with pytest.raises(ConnectorSpecError, match=f"dev/orders.json, key '{key}'.*{message}"):
        load_connectors(settings)


@pytest.mark.parametrize(
    "keys, key, message",
    [
        ({"transforms": "unwrap"}, "transforms.unwrap.type", "is required"),
        (
            {"transforms": "daily", "transforms.daily.type": "org.apache.kafka.connect.transforms.TimestampRouter"},
            "transforms.daily.type",
            "names its topics by record",
        ),
        (
            {
                "transforms": "route",
                "predicates": "p",
                "transforms.route.predicate": "p",
                "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "(.*)",
                "transforms.route.replacement": "copy-$1",
            },
            "transforms.route.type",
            "names its topics by record",
        ),
    ],
)
def test_a_connector_whose_transforms_do_not_fit_names_file_and_key(scratch_env, monkeypatch, keys, key, message):
    settings, folder = scratch_env
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    document["config"].update(keys)
    path.write_text(json.dumps(document))
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    with pytest.raises(ConnectorSpecError, match=f"dev/orders.json, key '{key}'.*{message}"):
        load_connectors(settings)


def test_a_regex_router_deploys_with_the_routed_prefixes(scratch_env, monkeypatch):
    # given an S3-object connector whose RegexRouter routes its topic to copy-<topic>
    settings, folder = scratch_env
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    document["config"].update(
        {
            "transforms": "route",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "copy-$1",
        }
    )
    path.write_text(json.dumps(document))
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    # then it deploys, and the job writes (and its tables lie) under the routed topics' prefixes
    [spec] = [s for s in load_connectors(settings) if s.name == document["name"]]
    assert spec.written == tuple(f"copy-{topic}" for topic in spec.topics)
    assert spec.data_prefixes() == tuple(f"{spec.topics_dir}/copy-{topic}/" for topic in spec.topics)


def test_a_filter_deploys(scratch_env, monkeypatch):
    settings, folder = scratch_env
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    document["config"].update(
        {"transforms": "drop", "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter"}
    )
    path.write_text(json.dumps(document))
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    assert [spec.name for spec in load_connectors(settings)] == [json.loads(path.read_text())["name"]]


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("errors.deadletterqueue.topic.name", "orders-dlq", {"dlq_topic": "orders-dlq", "dlq_s3_prefix": None}),
        (
            "errors.deadletterqueue.s3.prefix",
            "dlq/orders-s3-sink/",
            {"dlq_topic": None, "dlq_s3_prefix": "dlq/orders-s3-sink"},
        ),
    ],
)
def test_connector_dead_letter_queue_is_part_of_its_spec(scratch_env, monkeypatch, key, value, expected):
    settings, folder = scratch_env
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    for dlq_key in ("errors.deadletterqueue.topic.name", "errors.deadletterqueue.s3.prefix"):
        document["config"].pop(dlq_key, None)  # one destination: the one under test
    document["config"].update({"errors.tolerance": "all", key: value})
    path.write_text(json.dumps(document))
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    (spec,) = load_connectors(settings)
    assert {"dlq_topic": spec.dlq_topic, "dlq_s3_prefix": spec.dlq_s3_prefix} == expected


def test_every_shipped_connector_fits_its_environment():
    for env in ("dev", "prod"):
        specs = load_connectors(load_settings(env))
        assert specs and all(s.topics for s in specs)


def test_a_confluent_cloud_connector_with_secret_references_deploys(scratch_env, monkeypatch):
    """A Cloud connector file (S3_SINK keys, its credentials as ${secrets:...}) passes synth's checks, with the
    Cloud defaults in its spec (a dead-letter topic of its own)."""
    settings, folder = scratch_env
    settings = dataclasses.replace(settings, restore=RestoreSettings())  # dev's names the connector removed here
    (folder / "orders.json").unlink()
    (folder / "cloud.json").write_text(
        json.dumps(
            {
                "name": "cloud-s3-sink",
                "config": {
                    "connector.class": "S3_SINK",
                    "topics": "orders",
                    "input.data.format": "JSON",
                    "output.data.format": "PARQUET",
                    "compression.codec": "PARQUET - snappy",
                    "time.interval": "HOURLY",
                    "timezone": "PST",
                    "kafka.api.key": "${secrets:msk/cloud-sink:username}",
                    "kafka.api.secret": "${secrets:msk/cloud-sink:password}",
                    "bootstrap.servers": "b-1.eventsdev.abc123.c2.kafka.eu-west-1.amazonaws.com:9096",
                    "s3.bucket.name": settings.bucket_name,
                    "s3.region": settings.region,
                    "offset.storage.dynamodb.table": settings.table_name,
                },
            }
        )
    )
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    (spec,) = load_connectors(settings)
    assert (spec.format, spec.dlq_topic, spec.topics) == ("parquet", "dlq-cloud-s3-sink", ("orders",))
    assert spec.config["timezone"] == "PST" and spec.config["flush.size"] == 1000


def _with_ignored_keys(folder) -> None:
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    document["config"].update({"s3.endpoint": "https://s3.eu-west-1.amazonaws.com", "s3.sink.flush.size": "10"})
    path.write_text(json.dumps(document))


def test_connector_keys_nobody_knows_are_carried_by_the_spec(scratch_env, monkeypatch):
    # given an environment that does not refuse ignored keys and a connector file with two
    settings, folder = scratch_env
    assert settings.connectors == ConnectorPolicy(refuse_ignored_keys=False)
    _with_ignored_keys(folder)
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    # when loaded, then it loads, carrying each with the key it resembles (synthesis warns about each)
    (spec,) = load_connectors(settings)
    assert [(i.key, i.suggestion) for i in spec.ignored] == [
        ("s3.endpoint", "store.url"),
        ("s3.sink.flush.size", "flush.size"),
    ]


def test_an_environment_that_refuses_ignored_keys_names_file_and_key(scratch_env, monkeypatch):
    settings, folder = scratch_env
    strict = dataclasses.replace(settings, connectors=ConnectorPolicy(refuse_ignored_keys=True))
    _with_ignored_keys(folder)
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    with pytest.raises(
        ConnectorSpecError,
        match="dev/orders.json, key 's3.endpoint': is ignored .*did you mean "
        "`store.url`.*connectors.refuse_ignored_keys",
    ):
        load_connectors(strict)


def test_prod_refuses_ignored_keys_and_dev_warns():
    assert load_settings("prod").connectors.refuse_ignored_keys
    assert not load_settings("dev").connectors.refuse_ignored_keys


def test_a_connector_file_with_a_key_set_twice_deploys_with_a_warning_naming_it(scratch_env, monkeypatch):
    # given the dev connector file with flush.size written twice (JSON keeps the last, as Kafka Connect does)
    settings, folder = scratch_env
    path = folder / "orders.json"
    path.write_text(
        path.read_text().replace('"flush.size": "10000",', '"flush.size": "100",\n    "flush.size": "10000",')
    )
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    # when loaded for synthesis; then it deploys with the last value and a warning names the file and the key
    (spec,) = load_connectors(settings)
    assert spec.config["flush.size"] == 10000
    assert ignored_key_warnings((spec,)) == [
        'connector config dev/orders.json, key \'flush.size\': is set twice ("100", then "10000"); the last is used, '
        "as Kafka Connect does: remove one"
    ]


def test_several_errors_of_a_connector_file_are_one_line_naming_the_first_key_and_the_others(scratch_env, monkeypatch):
    settings, folder = scratch_env
    path = folder / "orders.json"
    document = json.loads(path.read_text())
    document["config"].update({"flush.size": "-1", "topics": ["orders"]})
    path.write_text(json.dumps(document))
    monkeypatch.setattr(type(settings), "connectors_dir", property(lambda self: folder))
    with pytest.raises(ConnectorSpecError) as raised:
        load_connectors(settings)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith("connector config dev/orders.json, key 'topics': is a JSON array")
    assert str(raised.value).endswith("(and keys 'flush.size': `sink-engine validate` lists them all)")
