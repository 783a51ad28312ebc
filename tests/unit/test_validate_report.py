"""`sink-engine validate` as a new user meets it: every error of a file in one pass, in words that name the key and
not Python's, the refusals and warnings Connect and S3 would give, and a report of the keys set in Connect's
notation."""

from __future__ import annotations

import json

import pytest

from sink_engine import cli
from sink_engine.config import WorkerSettings, parse_config
from sink_engine.config.lint import bucket_name_problem
from sink_engine.errors import ConfigError, ConfigErrors
from tests.builders import connector_keys

WORKER = WorkerSettings({"bootstrap.servers": "localhost:9092"}, {"bootstrap.servers": "w.properties"})
PYTHON_WORDS = ("invalid literal", "is not a valid int", "None", "False", "True", "Traceback", "'--config'")


def validate(tmp_path, capsys, config: dict | str, *options: str) -> tuple[int, str, str]:
    path = tmp_path / "connector.json"
    path.write_text(config if isinstance(config, str) else json.dumps({"name": "c", "config": config}))
    code = cli.main(["validate", "--config", str(path), *options])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def brokers(monkeypatch):
    monkeypatch.setenv("CONNECT_BOOTSTRAP_SERVERS", "localhost:9092")


def keys_refused(config: dict) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        parse_config(config, worker=WORKER)
    error = raised.value
    return [e.key for e in error.errors] if isinstance(error, ConfigErrors) else [error.key]


def test_four_errors_are_listed_in_one_pass_without_pythons_words(tmp_path, capsys):
    # given a config with four mistakes
    config = connector_keys(
        {
            "bootstrap.servers": None,
            "flush.size": "-1",
            "s3.bucket.name": "My_Bucket",
            "s3.region": "us-east",
            "store.kafka.keys": "yes",
        }
    )
    # when validated; then it exits 2 listing all four, each naming its key, none in Python's words
    code, _, err = validate(tmp_path, capsys, config)
    assert code == 2
    assert err.startswith("error: 4 config errors:")
    for key in ("flush.size", "s3.bucket.name", "s3.region", "store.kafka.keys"):
        assert f"config key '{key}'" in err
    assert '"-1": must be at least 1' in err and '"yes": expected true or false' in err
    assert not [word for word in PYTHON_WORDS if word in err]


@pytest.mark.parametrize(
    "value, reason",
    [
        ("ten", "expected a whole number"),
        ("1.5", "expected a whole number"),
        (True, "expected a whole number, not true or false"),
    ],
)
def test_a_malformed_number_says_so_in_words(value, reason):
    with pytest.raises(ConfigError, match=f"config key 'flush.size': {json.dumps(value)}: {reason}$"):
        parse_config(connector_keys({"flush.size": value}), worker=WORKER)


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"connector.class": "io.aiven.kafka.connect.s3.AivenKafkaConnectS3SinkConnector"}, "connector.class"),
        ({"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector"}, "connector.class"),
        ({"topics": ["orders", "payments"]}, "topics"),
        ({"s3.bucket.name": "<my-bucket-name>"}, "s3.bucket.name"),
        ({"topics": "<topic-1>, <topic-2>"}, "topics"),
        ({"aws.secret.access.key": "<my-aws-access-key-secret>", "aws.access.key.id": "AKIA"}, "aws.secret.access.key"),
        ({"s3.bucket.name": "my_bucket"}, "s3.bucket.name"),
        ({"s3.region": "US-EAST-1"}, "s3.region"),
        ({"s3.region": "eu-west"}, "s3.region"),
    ],
)
def test_what_connect_or_s3_refuses_is_refused_naming_the_key(overrides, key):
    assert key in keys_refused(connector_keys({"bootstrap.servers": None, **overrides}))


@pytest.mark.parametrize(
    "name, problem",
    [
        ("ab", "it has 2 characters; S3 takes 3 to 63"),
        ("a" * 64, "it has 64 characters; S3 takes 3 to 63"),
        ("Lake", "S3 takes lowercase letters"),
        ("-lake", "S3 takes lowercase letters"),
        ("lake..raw", "two adjacent periods"),
        ("192.168.5.4", "formatted as an IP address"),
        ("xn--lake", "'xn--' is reserved by S3"),
        ("lake-s3alias", "'-s3alias' is reserved by S3"),
        ("lake--x-s3", "'--x-s3' is reserved by S3"),
    ],
)
def test_bucket_names_follow_s3s_naming_rules(name, problem):
    assert problem in bucket_name_problem(name)


@pytest.mark.parametrize("name", ["lake", "pub.ecomm.customer-bucket", "acme-sink-dev-111111111111", "a1b"])
def test_valid_bucket_names_pass(name):
    assert bucket_name_problem(name) is None


def test_a_java_regex_named_group_is_not_taken_for_a_placeholder():
    # Java's (?<name>...) is no Python regex: refused as one, not as a template's placeholder
    with pytest.raises(ConfigError, match="'topics.regex': not a valid regular expression"):
        parse_config(connector_keys({"topics": None, "topics.regex": "(?<env>dev|prod)\\.orders"}), worker=WORKER)


@pytest.mark.parametrize(
    "document, key, words",
    [
        (
            '{"name": "c", "config": {"topics": "t", "s3.bucket.name": "lake", "flush.size": "5", "format.class": '
            '"JsonFormat", "connector.class": "S3SinkConnector", "flush.size": "500"}}',
            "flush.size",
            'is set twice ("5", then "500"); the last is used',
        ),
        (
            '{"name": "c", "config": {"topics": "t", "s3.bucket.name": "lake", "flush.size": "5", "format.class": '
            '"JsonFormat"}}',
            "connector.class",
            "is not set (Kafka Connect requires it)",
        ),
        (
            '{"name": "c", "config": {"topics": "t", "s3.bucket.name": "lake", "flush.size": "5", "format.class": '
            '"JsonFormat", "connector.class": "S3Sink", "s3.region": "xx-nowhere-9"}}',
            "s3.region",
            "a Region this AWS SDK (botocore) does not know",
        ),
    ],
)
def test_what_connect_takes_while_most_likely_a_mistake_is_a_warning_naming_the_key(
    tmp_path, capsys, document, key, words
):
    code, out, _ = validate(tmp_path, capsys, document)
    assert code == 0
    warnings = out[out.index("warnings (") :]
    assert f"  {key}: " in warnings and words in warnings


def test_the_report_shows_the_keys_set_in_connects_notation_and_counts_the_defaults(tmp_path, capsys):
    # given a 13-key connector file, as published, and the worker's brokers
    config = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "tasks.max": "1",
        "topics": "orders",
        "s3.region": "eu-west-1",
        "s3.bucket.name": "lake",
        "flush.size": "3",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        "schema.compatibility": "NONE",
        "store.kafka.keys": "false",
        "behavior.on.null.values": "ignore",
    }
    code, out, _ = validate(tmp_path, capsys, config)
    lines = out.splitlines()
    # then it lists what was set, the brokers with where they came from, and a count of the rest
    assert code == 0 and len(lines) <= 20
    assert lines[0].startswith("connector c: 13 keys set, 1 implied,") and "(--all lists them)" in lines[0]
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[1:]}
    assert rows["bootstrap.servers"] == "localhost:9092  (from $CONNECT_BOOTSTRAP_SERVERS)"
    assert rows["store.kafka.keys"] == "false"
    assert rows["format.class"] == "io.confluent.connect.s3.format.json.JsonFormat"
    assert not [word for word in PYTHON_WORDS if word in out]
    # and with --all every key, in Connect's notation
    _, everything, _ = validate(tmp_path, capsys, config, "--all")
    assert len(everything.splitlines()) > 100
    rows = {line.split()[0]: line.split()[1] for line in everything.splitlines()[1:] if "  " in line}
    assert rows["topics.regex"] == "null" and rows["store.kafka.headers"] == "false"
    assert not [word for word in PYTHON_WORDS if word in everything]


def test_worker_settings_without_effect_are_counted(tmp_path, capsys):
    worker = tmp_path / "connect-distributed.properties"
    worker.write_text("bootstrap.servers=w:9092\ngroup.id=connect-cluster\nconfig.storage.topic=connect-configs\n")
    code, out, _ = validate(tmp_path, capsys, connector_keys({"bootstrap.servers": None}), "--worker", str(worker))
    assert code == 0
    assert f"(from bootstrap.servers of {worker})" in out
    assert "worker settings with no effect here (2): config.storage.topic, group.id" in out


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "error: option --config: cannot read the connector file"),
        (
            '{"name": "c",\n "config": {"topics": "t"\n}',
            "is not valid JSON: Expecting ',' delimiter at line 3, column 2",
        ),
    ],
)
def test_an_unreadable_file_is_named_without_a_traceback(tmp_path, capsys, content, message):
    path = tmp_path / "connector.json"
    if content is not None:
        path.write_text(content)
    assert cli.main(["validate", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "config key" not in err
