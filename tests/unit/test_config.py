"""Config parsing: both connector JSON shapes, class names, defaults, and errors that name the key."""

from __future__ import annotations

import pytest

from sink_engine.config import load_config
from sink_engine.errors import ConfigError
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys

BASE = connector_keys(
    {
        "name": None,
        "topics": "a, b",
        "flush.size": "1000",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "value.converter.schemas.enable": "false",
    }
)


def test_wrapped_and_flat_shapes_are_the_same():
    wrapped = parse_checked_config({"name": "c1", "config": BASE})
    flat = parse_checked_config({"name": "c1", **BASE})
    assert wrapped.values == flat.values
    assert wrapped.name == "c1" and wrapped["topics"] == ("a", "b") and wrapped["flush.size"] == 1000


def test_defaults_follow_the_confluent_connector():
    config = parse_checked_config({"name": "c1", **BASE})
    assert config["topics.dir"] == "topics"
    assert config["directory.delim"] == "/" and config["file.delim"] == "+"
    assert config["filename.offset.zero.pad.width"] == 10
    assert config["partitioner.class"] == "default"
    assert config["s3.compression.type"] == "none"
    assert config["tasks.max"] == 1


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("io.confluent.connect.s3.format.json.JsonFormat", "json"),
        ("JsonFormat", "json"),
        ("json", "json"),
        ("io.confluent.connect.s3.format.parquet.ParquetFormat", "parquet"),
        ("AvroFormat", "avro"),
        ("io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "bytearray"),
        ("BlockGzipFormat", "blockgzip"),
    ],
)
def test_format_class_names_and_short_names(spelling, canonical):
    assert parse_checked_config({"name": "c", **BASE, "format.class": spelling})["format.class"] == canonical


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("flush.size", None, "is required"),
        ("flush.size", "0", "at least 1"),
        ("flush.size", "ten", '"ten": expected a whole number'),
        ("parquet.codec", "lzo", "expected one of none, snappy, gzip, lz4, zstd, brotli"),
        ("avro.codec", "lz4", "expected one of null, deflate, snappy, bzip2, zstandard, xz"),
        ("format.bytearray.separator", "\\q", "unknown escape \\q"),
        ("s3.sse.kms.key.id", "alias/lake", "only used with s3.ssea.name=aws:kms"),
        ("s3.ssea.name", "aws:sse", "expected one of , aes256, aws:kms"),
        ("s3.acl.canned", "public", "expected one of private, public-read"),
        ("s3.part.size", str(5 * 1024 * 1024 - 1), "at least 5242880"),
        ("s3.sse.key", "secret", "customer-provided encryption keys (SSE-C) is not built yet"),
        ("format.class", "com.example.Nope", "not a class this engine knows"),
        ("timezone", "Mars/Olympus", "is not a known time zone id"),
        ("schema.compatibility", "sideways", "expected one of none, backward, forward, full"),
        ("s3.compression.type", "zstd", "expected one of none, gzip"),
        ("s3.compression.level", "10", "at most 9"),
        ("rotate.interval.ms", "-5", "at least -1"),
        ("key.converter.basic.auth.credentials.source", "SASL_INHERIT", "expected one of url, user_info"),
        ("bootstrap.servers", None, "Kafka Connect takes it from the worker"),
        # past the key's Java type in Confluent's ConfigDef (flush.size is an INT, rotate.interval.ms a LONG)
        ("flush.size", "99999999999999999999999", "at most 2147483647"),
        ("rotate.interval.ms", "99999999999999999999999", "at most 9223372036854775807"),
        # the DynamoDB partition key of the offsets and the lease holds at most 2,048 bytes
        ("name", "\u00e9" * 1025, "must be 1 to 2048 bytes of UTF-8"),
        ("name", "  ", "must be 1 to 2048 bytes of UTF-8"),
    ],
)
def test_errors_name_the_key(key, value, message):
    raw = {"name": "c", **BASE}
    if value is None:
        raw.pop(key)
    else:
        raw[key] = value
    with pytest.raises(ConfigError) as caught:
        parse_checked_config(raw)
    assert caught.value.key == key
    assert f"'{key}'" in str(caught.value) and message in str(caught.value)


def test_topics_and_regex_are_exclusive():
    with pytest.raises(ConfigError, match="exactly one of topics and topics.regex"):
        parse_checked_config({"name": "c", **BASE, "topics.regex": "a.*"})
    regex = {k: v for k, v in BASE.items() if k != "topics"}
    config = parse_checked_config({"name": "c", **regex, "topics.regex": "events-.*"})
    assert config.topic_matches("events-1") and not config.topic_matches("other")


def test_harmless_keys_are_accepted_unknown_ones_ignored_and_overrides_pass_through():
    config = parse_checked_config(
        {
            "name": "c",
            **BASE,
            "s3.wan.mode": "false",
            "config.action.reload": "restart",
            "consumer.override.client.id": "sink",
            "s3.wan.mod": "false",
        }
    )
    assert config.unknown == ("config.action.reload", "s3.wan.mode")
    assert [(i.key, i.suggestion) for i in config.ignored] == [("s3.wan.mod", "s3.wan.mode")]
    assert config.consumer_overrides() == {"client.id": "sink"}
    with pytest.raises(ConfigError, match="'s3.wan.mode': S3 Transfer Acceleration is not supported"):
        parse_checked_config({"name": "c", **BASE, "s3.wan.mode": "true"})


def test_load_config_reports_unreadable_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(str(bad))
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('{"name": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1.json is not UTF-8 text \(byte 13: b'\\xe9'\)") as caught:
        load_config(str(latin1))
    assert caught.value.key == "--config"


@pytest.mark.parametrize(
    "given, lone, missing",
    [
        ({"aws.access.key.id": "AKIAEXAMPLE"}, "aws.access.key.id", "aws.secret.access.key"),
        ({"aws.access.key.id": "AKIAEXAMPLE", "aws.secret.key": "typo"}, "aws.access.key.id", "aws.secret.access.key"),
        ({"aws.secret.access.key": "${secrets:s3:secret}"}, "aws.secret.access.key", "aws.access.key.id"),
    ],
)
def test_half_a_pair_of_static_keys_is_ignored_and_reported_as_confluent_uses_the_default_chain(given, lone, missing):
    # given a self-managed config with one of the two static S3 keys (a typo in the other, say)
    config = parse_checked_config({"name": "c", **BASE, **given})
    # then it validates, the S3 client takes the default chain, and the lone key is reported as ignored
    assert config["aws.access.key.id"] is None and config["aws.secret.access.key"] is None
    reported = {ignored.key: ignored for ignored in config.ignored}
    assert reported[lone].suggestion == missing and "default credentials chain" in reported[lone].reason
    # but with AwsAccessKeyCredentialsProvider both are required
    with pytest.raises(ConfigError) as caught:
        parse_checked_config(
            {
                "name": "c",
                **BASE,
                **given,
                "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAccessKeyCredentialsProvider",
            }
        )
    assert caught.value.key == missing
