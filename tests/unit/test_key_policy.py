"""The key policy: a key no one knows is ignored and reported with the known key it resembles; every key of the
Confluent S3 sink, storage-common, Kafka Connect and Confluent Cloud is known (honoured or with no effect here);
a key whose value turns on a feature the engine lacks, and a malformed value, are still refused."""

from __future__ import annotations

import json
import logging

import boto3
import pytest
from moto import mock_aws

from sink_engine import cli
from sink_engine.config.key_policy import IGNORED, IGNORED_CONVERTER, known_keys, why_unused
from sink_engine.config.keys import KEYS_BY_NAME
from sink_engine.driver.job import run_job
from sink_engine.errors import ConfigError, SinkError
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys

BASE = connector_keys({"topics": "a", "flush.size": "1000", "value.converter.schemas.enable": "false"})

# Every key the ConfigDefs declare (kafka-connect-storage-cloud S3SinkConnectorConfig; kafka-connect-storage-common
# StorageCommonConfig, StorageSinkConnectorConfig, HiveConfig, PartitionerConfig; Apache Kafka ConnectorConfig and
# SinkConnectorConfig), the worker keys pasted into connector files, and Confluent Cloud's S3_SINK keys.
CONFLUENT_KEYS = {
    "S3SinkConnectorConfig": (
        "s3.bucket.name",
        "s3.object.tagging",
        "s3.object.tagging.key.value.pairs",
        "s3.object.behavior.on.tagging.error",
        "s3.ssea.name",
        "s3.sse.customer.key",
        "s3.sse.kms.key.id",
        "s3.part.size",
        "s3.wan.mode",
        "enable.conditional.writes",
        "max.files.scan.limit",
        "s3.credentials.provider.class",
        "aws.access.key.id",
        "aws.secret.access.key",
        "s3.region",
        "s3.acl.canned",
        "s3.compression.type",
        "s3.send.digest",
        "s3.compression.level",
        "s3.part.retries",
        "format.bytearray.extension",
        "format.bytearray.separator",
        "s3.proxy.url",
        "s3.proxy.user",
        "s3.proxy.password",
        "s3.http.send.expect.continue",
        "behavior.on.null.values",
        "report.null.values.to.dlq",
        "max.write.duration.ms",
        "rotate.file.on.partition.change",
        "s3.retry.backoff.ms",
        "s3.path.style.access.enabled",
        "json.decimal.format",
        "store.kafka.keys",
        "store.kafka.headers",
        "keys.format.class",
        "headers.format.class",
        "s3.elastic.buffer.enable",
        "s3.elastic.buffer.init.capacity",
        "tombstone.encoded.partition",
        "s3.schema.partition.affix.type",
        "partitioner.max.open.files",
    ),
    "StorageCommonConfig": ("storage.class", "store.url", "topics.dir", "directory.delim", "file.delim"),
    "StorageSinkConnectorConfig": (
        "format.class",
        "flush.size",
        "rotate.interval.ms",
        "rotate.schedule.interval.ms",
        "schema.cache.size",
        "enhanced.avro.schema.support",
        "connect.meta.data",
        "retry.backoff.ms",
        "shutdown.timeout.ms",
        "filename.offset.zero.pad.width",
        "avro.codec",
        "allow.optional.map.keys",
        "schema.compatibility",
        "parquet.codec",
    ),
    "HiveConfig": ("hive.integration", "hive.metastore.uris", "hive.conf.dir", "hive.home", "hive.database"),
    "older connector versions": ("schema.generator.class",),
    "PartitionerConfig": (
        "partitioner.class",
        "partition.field.name",
        "partition.duration.ms",
        "path.format",
        "locale",
        "timezone",
        "timestamp.extractor",
        "timestamp.field",
    ),
    "ConnectorConfig": (
        "name",
        "connector.class",
        "key.converter",
        "value.converter",
        "header.converter",
        "tasks.max",
        "tasks.max.enforce",
        "transforms",
        "predicates",
        "config.action.reload",
        "errors.retry.timeout",
        "errors.retry.delay.max.ms",
        "errors.tolerance",
        "errors.log.enable",
        "errors.log.include.messages",
    ),
    "SinkConnectorConfig": (
        "topics",
        "topics.regex",
        "errors.deadletterqueue.topic.name",
        "errors.deadletterqueue.topic.replication.factor",
        "errors.deadletterqueue.context.headers.enable",
    ),
    "worker": (
        "internal.key.converter",
        "internal.value.converter",
        "internal.key.converter.schemas.enable",
        "internal.value.converter.schemas.enable",
        "key.converter.schemas.enable",
        "value.converter.schemas.enable",
        "group.id",
        "offset.flush.interval.ms",
        "plugin.path",
    ),
    "converters": (
        "value.converter.schema.registry.url",
        "value.converter.basic.auth.credentials.source",
        "value.converter.basic.auth.user.info",
        "value.converter.auto.register.schemas",
        "value.converter.use.latest.version",
        "value.converter.connect.meta.data",
        "value.converter.enhanced.avro.schema.support",
        "value.converter.value.subject.name.strategy",
        "key.converter.key.subject.name.strategy",
        "value.converter.decimal.format",
        "value.converter.replace.null.with.default",
        "value.converter.ignore.default.for.nullables",
        "value.converter.scrub.invalid.names",
        "value.converter.int.for.enums",
        "value.converter.schemas.cache.size",
        "value.converter.reference.subject.name.strategy",
    ),
    "Confluent Cloud S3_SINK": (
        "input.data.format",
        "input.key.format",
        "output.data.format",
        "output.keys.format",
        "output.headers.format",
        "compression.codec",
        "time.interval",
        "kafka.auth.mode",
        "kafka.api.key",
        "kafka.api.secret",
        "kafka.service.account.id",
        "authentication.method",
        "provider.integration.id",
        "schema.context.name",
        "max.poll.interval.ms",
        "max.poll.records",
        "csfle.enabled",
        "csfle.onFailure",
    ),
}


@pytest.mark.parametrize("key", sorted({k for keys in CONFLUENT_KEYS.values() for k in keys}))
def test_every_confluent_key_is_known(key):
    assert key in known_keys(KEYS_BY_NAME)


def ignored(config) -> dict[str, str | None]:
    return {i.key: i.suggestion for i in config.ignored}


@pytest.mark.parametrize(
    "key, suggested",
    [
        ("s3.endpoint", "store.url"),
        ("aws.region", "s3.region"),
        ("region", "s3.region"),
        ("s3.path.style.access", "s3.path.style.access.enabled"),
        ("bucket", "s3.bucket.name"),
        ("s3.bucket", "s3.bucket.name"),
        ("flush.count", "flush.size"),
        ("s3.wan.mod", "s3.wan.mode"),  # difflib: a typo of a known key
        ("rotate.intervall.ms", "rotate.interval.ms"),
        ("connector.s3.bucket.name", "s3.bucket.name"),  # a known key after a prefix
        ("consumer.max.poll.records", "consumer.override.max.poll.records"),  # a worker's consumer setting
        ("value.converter.schema.registry.ur", "value.converter.schema.registry.url"),
        ("frobnicate", None),
    ],
)
def test_an_unknown_key_is_ignored_with_the_key_it_resembles(key, suggested):
    # given a key no one knows, when the config is parsed, then it is accepted and reported, not refused
    config = parse_checked_config({**BASE, key: "x"})
    assert ignored(config) == {key: suggested}
    assert config.ignored[0].reason == (IGNORED_CONVERTER if ".converter." in key else IGNORED)
    assert key not in config.unknown


@pytest.mark.parametrize(
    "key, value, reason",
    [
        ("_comment", "archive orders", "a comment"),
        ("__note", "x", "a comment"),
        ("log4j.logger.io.confluent", "DEBUG", "log4j"),
        ("schema.registry.url", "http://registry:8081", "set value.converter.schema.registry.url"),
        ("basic.auth.user.info", "${secrets:sr:info}", "set value.converter.basic.auth.user.info"),
        ("schemas.enable", "false", "set value.converter.schemas.enable"),
        ("internal.value.converter.schemas.enable", "false", "worker setting"),
        ("max.poll.records", "500", "Confluent Cloud"),
        ("hive.metastore.uris", "thrift://h:9083", "hive.integration"),
        ("producer.override.compression.type", "lz4", "consumer.override"),
        ("value.converter.connect.meta.data", "false", "writer schema"),
        ("value.converter.replace.null.with.default", "true", "Confluent's default (true)"),
        ("s3.path.style.access.enabled", "true", "boto3"),
        ("confluent.topic.bootstrap.servers", "b:9092", "license topic"),
    ],
)
def test_a_known_key_without_effect_is_accepted_with_why(key, value, reason):
    config = parse_checked_config({**BASE, key: value})
    assert key in config.unknown and config.ignored == ()
    assert reason in why_unused(key)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("s3.wan.mode", "true", "S3 Transfer Acceleration is not supported"),
        ("value.converter.replace.null.with.default", "false", "set it to true (Confluent's default)"),
        ("value.converter.enhanced.avro.schema.support", "true", "set it to false"),
        ("report.null.values.to.dlq", "true", "skipped tombstones reported to the dead-letter queue"),
        ("s3.object.tagging.key.value.pairs", "team:data", "extra tags"),
        ("csfle.enabled", "true", "client-side field level encryption"),
        ("storage.class", "io.confluent.connect.hdfs.storage.HdfsStorage", "S3 is the only storage"),
        ("flush.size", "ten", '"ten": expected a whole number'),
    ],
)
def test_a_key_that_asks_for_what_the_engine_lacks_or_a_malformed_value_is_still_refused(key, value, message):
    with pytest.raises(ConfigError) as caught:
        parse_checked_config({**BASE, key: value})
    assert caught.value.key == key and message in str(caught.value)


def test_validate_lists_ignored_keys_with_their_suggestion_and_exits_0(tmp_path, capsys):
    # given a published-style config with look-alike keys, a comment and a Connect key without effect
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "name": "c",
                "config": {
                    **BASE,
                    "s3.endpoint": "http://minio:9000",
                    "aws.region": "eu-west-1",
                    "_comment": "nightly",
                    "config.action.reload": "restart",
                },
            }
        )
    )
    # when validated, then it passes and lists each kind apart
    assert cli.main(["validate", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert "(accepted, no effect here: a comment" in lines["_comment"]
    assert "(accepted, no effect here:" in lines["config.action.reload"]
    assert "ignored keys (2):" in out
    assert lines["s3.endpoint"].endswith("did you mean `store.url`?)") and "(ignored: unknown" in lines["s3.endpoint"]
    assert lines["aws.region"].endswith("did you mean `s3.region`?)")
    assert out.index("config.action.reload  ") < out.index("ignored keys") < out.index("s3.endpoint  ")


def test_a_run_reports_each_ignored_key_as_an_event_before_anything_else(caplog, monkeypatch):
    # given a config with two ignored keys and no offsets table (the run stops at its first check)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    config = parse_checked_config({**BASE, "s3.endpoint": "http://minio:9000", "flush.count": "5"})
    caplog.set_level(logging.INFO, logger="sink_engine")
    with mock_aws(), pytest.raises(SinkError, match="offsets table .* does not exist"):
        run_job(config, spark=None, dynamodb=boto3.client("dynamodb", region_name="us-east-1"))
    # then one CONFIG_KEY_IGNORED warning per key, naming it and the key it resembles
    events = [(r.levelno, json.loads(r.getMessage())) for r in caplog.records if "CONFIG_KEY_IGNORED" in r.getMessage()]
    assert [(level, e["connector"], e["key"], e["suggestion"]) for level, e in events] == [
        (logging.WARNING, "c", "flush.count", "flush.size"),
        (logging.WARNING, "c", "s3.endpoint", "store.url"),
    ]
    assert all(e["reason"] == IGNORED for _, e in events)
