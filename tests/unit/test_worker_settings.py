"""A Kafka Connect worker's settings (sink_engine/config/worker.py): a worker properties file, CONNECT_* variables,
and how they layer under a connector's own settings, as Connect's Worker.baseConsumerConfigs does."""

from __future__ import annotations

import pytest

from sink_engine.config import parse_config
from sink_engine.config.properties import parse_properties
from sink_engine.config.worker import WorkerSettings, from_environment, read_worker
from sink_engine.errors import ConfigError, OptionError
from sink_engine.source.client_config import consumer_settings
from sink_engine.source.settings import SourceSettings
from sink_engine.validation import check_config
from tests.builders import connector_keys

CONNECTOR = connector_keys({"bootstrap.servers": None})  # as published: no brokers
MSK_IAM_WORKER = {
    "bootstrap.servers": "b-1.msk:9098",
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "AWS_MSK_IAM",
    "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
    "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
}


def worker(properties: dict, origin: str = "w.properties") -> WorkerSettings:
    return WorkerSettings(properties, dict.fromkeys(properties, origin))


def client(connector: dict, settings: WorkerSettings) -> dict:
    return consumer_settings(SourceSettings.from_config(check_config(parse_config(connector, worker=settings))))


def test_a_properties_file_reads_as_javas_properties_load():
    text = (
        "# comment\n! also a comment\nbootstrap.servers=a:9092,\\\n    b:9092\n"
        "sasl.mechanism : PLAIN\ngroup.id connect-cluster\nssl.key.password=p\\u0061ss\\=word\nempty=\n"
    )
    assert parse_properties(text) == {
        "bootstrap.servers": "a:9092,b:9092",
        "sasl.mechanism": "PLAIN",
        "group.id": "connect-cluster",
        "ssl.key.password": "pass=word",
        "empty": "",
    }


@pytest.mark.parametrize(
    "variable, key",
    [
        ("CONNECT_BOOTSTRAP_SERVERS", "bootstrap.servers"),
        ("CONNECT_CONSUMER_SASL_JAAS_CONFIG", "consumer.sasl.jaas.config"),
        ("CONNECT_CONSUMER_FETCH__MIN_BYTES", "consumer.fetch-min.bytes"),
        ("CONNECT_SSL_KEYSTORE___TYPE", "ssl.keystore_type"),
    ],
)
def test_environment_variables_name_keys_as_confluents_images_do(variable, key):
    # Confluent's rule: '.' as '_', '-' as '__', '_' as '___'
    assert from_environment({variable: "v", "PATH": "/bin"}) == {key: "v"}


def test_a_worker_file_wins_over_the_environment_per_key(tmp_path):
    path = tmp_path / "connect-distributed.properties"
    path.write_text("bootstrap.servers=file:9092\n")
    settings = read_worker(str(path), {"CONNECT_BOOTSTRAP_SERVERS": "env:9092", "CONNECT_GROUP_ID": "g"})
    assert settings.properties == {"bootstrap.servers": "file:9092", "group.id": "g"}
    assert settings.where("bootstrap.servers") == f"bootstrap.servers of {path}"
    assert settings.where("group.id") == "$CONNECT_GROUP_ID"


def test_a_worker_file_that_cannot_be_read_names_the_option(tmp_path):
    with pytest.raises(OptionError, match=r"option --worker: cannot read the worker file .*missing.properties"):
        read_worker(str(tmp_path / "missing.properties"), {})


def test_the_brokers_come_from_the_worker_when_the_connector_names_none():
    config = parse_config(CONNECTOR, worker=worker({"bootstrap.servers": "w:9092"}))
    assert config["bootstrap.servers"] == ("w:9092",)
    origins = {key: origin for key, _, origin in config.effective()}
    assert origins["bootstrap.servers"] == "from bootstrap.servers of w.properties"


@pytest.mark.parametrize(
    "connector, properties, expected",
    [
        # the worker's consumer.bootstrap.servers over its bootstrap.servers (Connect's consumer.* prefix)
        (CONNECTOR, {"bootstrap.servers": "w:1", "consumer.bootstrap.servers": "c:1"}, "c:1"),
        # a connector file's own bootstrap.servers over the worker's
        (connector_keys({"bootstrap.servers": "own:1"}), {"consumer.bootstrap.servers": "c:1"}, "own:1"),
        # consumer.override.bootstrap.servers over everything (Connect's connector-level override)
        (connector_keys({"consumer.override.bootstrap.servers": "o:1"}), {"bootstrap.servers": "w:1"}, "o:1"),
    ],
)
def test_the_brokers_follow_connects_precedence(connector, properties, expected):
    assert client(connector, worker(properties))["bootstrap.servers"] == expected


def test_no_brokers_anywhere_is_an_error_saying_where_they_belong():
    with pytest.raises(ConfigError) as raised:
        parse_config(CONNECTOR, worker=WorkerSettings())
    assert raised.value.key == "bootstrap.servers"
    assert "--worker" in str(raised.value) and "CONNECT_BOOTSTRAP_SERVERS" in str(raised.value)


def test_a_worker_with_msk_iam_gives_the_consumer_msk_iam():
    result = client(CONNECTOR, worker(MSK_IAM_WORKER))
    assert result["bootstrap.servers"] == "b-1.msk:9098"
    assert result["security.protocol"] == "SASL_SSL" and result["sasl.mechanisms"] == "OAUTHBEARER"
    assert callable(result["oauth_cb"])


def test_security_settings_layer_connector_over_worker_consumer_over_worker_top_level():
    # given a worker whose top level says SSL, its consumer.* SASL_SSL with SCRAM, and a connector that overrides
    # the mechanism and login with its own consumer.override.*
    settings = worker(
        {
            "bootstrap.servers": "w:9096",
            "security.protocol": "SSL",
            "consumer.security.protocol": "SASL_SSL",
            "consumer.sasl.mechanism": "SCRAM-SHA-512",
            "consumer.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="worker" password="w";',
            "consumer.fetch.min.bytes": "1",
            "ssl.ca.location": "/etc/ca.pem",
        }
    )
    connector = {
        **CONNECTOR,
        "consumer.override.sasl.mechanism": "PLAIN",
        "consumer.override.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
        'required username="own" password="o";',
        "consumer.override.fetch.min.bytes": "2",
    }
    # when the consumer's settings are built; then each setting is taken from the highest layer that sets it
    result = client(connector, settings)
    assert result["security.protocol"] == "SASL_SSL"  # worker consumer.* over worker top level
    assert (result["sasl.mechanisms"], result["sasl.username"]) == ("PLAIN", "own")  # connector over worker
    assert result["fetch.min.bytes"] == "2" and result["ssl.ca.location"] == "/etc/ca.pem"


def test_an_error_in_a_worker_setting_names_it_with_its_file():
    settings = worker(
        {"bootstrap.servers": "w:9092", "consumer.sasl.mechanism": "PLAIN", "consumer.security.protocol": "SASL_SSL"}
    )
    with pytest.raises(ConfigError) as raised:
        client(CONNECTOR, settings)
    assert raised.value.key == "consumer.sasl.mechanism of w.properties"


def test_worker_keys_without_effect_here_are_listed():
    settings = worker(
        {
            "bootstrap.servers": "w:1",
            "group.id": "g",
            "producer.linger.ms": "5",
            "consumer.max.poll.records": "5",
            "sasl.mechanism": "PLAIN",
        }
    )
    assert settings.unused() == ("group.id", "producer.linger.ms")


def test_a_deployed_job_takes_its_brokers_from_the_cluster_at_run_time():
    # given the stack's cluster and no brokers named anywhere; when parsed (cdk synth, validate)
    config = parse_config(CONNECTOR, worker=WorkerSettings(cluster_arn="arn:aws:kafka:eu-west-1:1:cluster/c/u-1"))
    # then it parses, its brokers still to be asked for, and says where they will come from
    assert config["bootstrap.servers"] == ()
    assert dict((k, o) for k, _, o in config.effective())["bootstrap.servers"] == (
        "from the brokers of MSK cluster arn:aws:kafka:eu-west-1:1:cluster/c/u-1, asked for at run time"
    )


def test_a_connector_without_a_converter_takes_the_workers_with_its_options():
    # given a worker whose value converter is Avro with a registry, and a connector that names none
    settings = worker(
        {
            "bootstrap.servers": "w:1",
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": "http://registry:8081",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
        }
    )
    connector = {
        **CONNECTOR,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter.schemas.enable": "false",
    }
    # when parsed; then its values are read as the worker says, its keys with its own converter and no worker option
    config = check_config(parse_config(connector, worker=settings))
    assert config["value.converter"] == "avro"
    assert config["value.converter.schema.registry.url"] == "http://registry:8081"
    assert (config["key.converter"], config["key.converter.schemas.enable"]) == ("string", True)
    origins = {key: origin for key, _, origin in config.effective()}
    assert origins["value.converter"] == "from value.converter of w.properties"
    assert settings.unused() == ()
    # and its own value converter option is left out and reported, as Connect configures the worker's converter with
    # the worker's options only
    (unheeded,) = config.ignored
    assert unheeded.key == "value.converter.schemas.enable" and "the worker's is used" in unheeded.reason
