"""Confluent Cloud's S3 sink (`connector.class: S3_SINK`): its keys turned into the self-managed connector's.

Confluent Cloud names the converter, the format, its codec and the time layout with keys of its own and has
defaults of its own. `derive(raw)` returns the raw config with the self-managed keys they imply, and for each
derived key the key it came from, so that `validate` can say so and an error can name the key the user wrote.
A Cloud key that contradicts a self-managed key set in the same file is an error naming the Cloud key. A Cloud key
in a self-managed config (another `connector.class`) is a key that connector does not define: Kafka Connect passes
it on and the connector's config parsing ignores it (Kafka's AbstractConfig logs unused keys as a warning), so it is
ignored here too, and reported as any ignored key (`CLOUD_KEY_IGNORED`).

Semantics as Confluent Cloud documents them (Amazon S3 Sink Connector for Confluent Cloud):
- `input.data.format` AVRO, JSON_SR, PROTOBUF, JSON (schemaless), STRING, BYTES: the value converter;
  `input.key.format` likewise for keys;
- `output.data.format` AVRO, JSON, PARQUET, BYTES: the format; `output.keys.format` / `output.headers.format`
  the formats of the keys / headers files (`store.kafka.keys` / `store.kafka.headers`);
- `compression.codec` `<FORMAT> - <codec>`: AVRO - bzip2|deflate|snappy, BYTES - gzip, JSON - gzip,
  PARQUET - gzip|snappy (and `<FORMAT> - none`); the format must be `output.data.format`'s;
- `time.interval` HOURLY or DAILY: the TimeBasedPartitioner with one-hour or one-day buckets, `path.format`
  defaulting to `'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH` or `'year'=YYYY/'month'=MM/'day'=dd`, the record's
  Kafka timestamp (or `timestamp.field` when set), and `rotate.interval.ms` defaulting to the interval;
- `provider.integration.id`: the IAM role of a Confluent provider integration, which Cloud's connector assumes;
  here the S3 client uses the job's own role (`s3.credentials.provider.class` the default chain), the value is kept;
- defaults of a Cloud connector: `flush.size` 1000; bad records do not stop it (`errors.tolerance` all) and go to
  a dead-letter topic created for it (`dlq-<name>` here; Cloud's is `dlq-<connector id>`) with error headers;
- the Schema Registry of AVRO, PROTOBUF and JSON_SR inputs, which Cloud finds itself: the caller's
  RegistryDefault when the file names none (config/cloud_registry.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sink_engine.config.cloud_registry import RegistryDefault, registry_keys
from sink_engine.config.keys import (
    CONVERTER_CLASSES,
    CREDENTIALS_PROVIDER_CLASSES,
    FORMAT_CLASSES,
    KEYS_BY_NAME,
    PARTITIONER_CLASSES,
)
from sink_engine.errors import ConfigError

CLOUD_CLASS = "S3_SINK"

INPUT_FORMATS = {
    "AVRO": "io.confluent.connect.avro.AvroConverter",
    "JSON_SR": "io.confluent.connect.json.JsonSchemaConverter",
    "PROTOBUF": "io.confluent.connect.protobuf.ProtobufConverter",
    "JSON": "org.apache.kafka.connect.json.JsonConverter",
    "STRING": "org.apache.kafka.connect.storage.StringConverter",
    "BYTES": "org.apache.kafka.connect.converters.ByteArrayConverter",
}
OUTPUT_FORMATS = {
    "AVRO": "io.confluent.connect.s3.format.avro.AvroFormat",
    "JSON": "io.confluent.connect.s3.format.json.JsonFormat",
    "PARQUET": "io.confluent.connect.s3.format.parquet.ParquetFormat",
    "BYTES": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
}
# compression.codec "<FORMAT> - <codec>": the self-managed key and value it means
CODECS = {
    ("AVRO", "bzip2"): ("avro.codec", "bzip2"),
    ("AVRO", "deflate"): ("avro.codec", "deflate"),
    ("AVRO", "snappy"): ("avro.codec", "snappy"),
    ("AVRO", "none"): ("avro.codec", "null"),
    ("BYTES", "gzip"): ("s3.compression.type", "gzip"),
    ("BYTES", "none"): ("s3.compression.type", "none"),
    ("JSON", "gzip"): ("s3.compression.type", "gzip"),
    ("JSON", "none"): ("s3.compression.type", "none"),
    ("PARQUET", "gzip"): ("parquet.codec", "gzip"),
    ("PARQUET", "snappy"): ("parquet.codec", "snappy"),
    ("PARQUET", "none"): ("parquet.codec", "none"),
}
INTERVALS = {
    "HOURLY": (3_600_000, "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"),
    "DAILY": (86_400_000, "'year'=YYYY/'month'=MM/'day'=dd"),
}
CLOUD_FLUSH_SIZE = 1000
# Keys that only Confluent Cloud's connector has; with another connector.class they are an error.
CLOUD_ONLY = (
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
)


def is_cloud(raw: Mapping[str, Any]) -> bool:
    return str(raw.get("connector.class", "")).strip() == CLOUD_CLASS


CLOUD_KEY_IGNORED = (
    f"a Confluent Cloud key, which the self-managed connector does not define (Kafka Connect "
    f"ignores it with a warning; it takes effect with connector.class {CLOUD_CLASS})"
)


def derive(raw: Mapping[str, Any], registry: RegistryDefault | None = None) -> tuple[dict, dict[str, str], tuple]:
    """(raw with the implied self-managed keys, {derived key: the key (or environment variable) it came from}, the
    Cloud keys of a self-managed config, left out of raw: ignored); `registry` is the Schema Registry of a Cloud
    config whose file names none."""
    derived = _Derived(raw)
    if not is_cloud(raw):
        ignored = tuple(key for key in CLOUD_ONLY if key in raw)
        return {k: v for k, v in derived.raw.items() if k not in ignored}, derived.sources, ignored
    _check_identity(raw)
    _provider_integration(derived)
    _formats(derived)
    for key, (value, origin) in registry_keys(derived.given, registry).items():
        derived.default(key, value, origin)
    _codec(derived)
    _time_interval(derived)
    _cloud_defaults(derived)
    return derived.raw, derived.sources, ()


class _Derived:
    def __init__(self, raw: Mapping[str, Any]):
        self.given, self.raw = dict(raw), dict(raw)
        self.sources: dict[str, str] = {}  # key -> the Cloud key that set it

    def upper(self, key: str) -> str | None:
        value = self.given.get(key)
        return None if value is None or str(value).strip() == "" else str(value).strip().upper()

    def set(self, key: str, value: Any, source: str) -> None:
        """`source` means `key`=`value`; a different value of `key` in the file is an error naming `source`."""
        if key in self.given and not _same(key, self.given[key], value):
            raise ConfigError(
                source,
                f"{self.given[source]} means {key}={value}, but the file sets {key} to "
                f"{self.given[key]}; remove one of them",
            )
        self.raw[key] = value
        if key not in self.given:
            self.sources[key] = source

    def default(self, key: str, value: Any, source: str) -> None:
        """A Cloud default of `key`, applied when the file does not set it."""
        if key not in self.given:
            self.raw[key], self.sources[key] = value, source


def _provider_integration(d: _Derived) -> None:
    """A provider integration is an IAM role Confluent Cloud assumes; here the S3 client uses the job's own role."""
    if d.given.get("provider.integration.id") in (None, ""):
        return
    if d.given.get("aws.access.key.id") or d.given.get("aws.secret.access.key"):
        raise ConfigError(
            "provider.integration.id", "means the job's own role; remove aws.access.key.id and aws.secret.access.key"
        )
    d.set("s3.credentials.provider.class", "DefaultAWSCredentialsProviderChain", "provider.integration.id")


def _formats(d: _Derived) -> None:
    for source, target, choices in (
        ("input.data.format", "value.converter", INPUT_FORMATS),
        ("input.key.format", "key.converter", INPUT_FORMATS),
        ("output.data.format", "format.class", OUTPUT_FORMATS),
        ("output.keys.format", "keys.format.class", OUTPUT_FORMATS),
        ("output.headers.format", "headers.format.class", OUTPUT_FORMATS),
    ):
        value = d.upper(source)
        if value is None:
            if source in ("input.data.format", "output.data.format"):
                raise ConfigError(
                    source, f"is required with connector.class {CLOUD_CLASS} (one of {', '.join(choices)})"
                )
            continue
        if value not in choices:
            raise ConfigError(source, f"{d.given[source]!r}: expected one of {', '.join(choices)}")
        d.set(target, choices[value], source)
        if value == "JSON" and target.endswith("converter"):  # Cloud's JSON is schemaless JSON
            d.set(f"{target}.schemas.enable", "false", source)


def _codec(d: _Derived) -> None:
    text = d.given.get("compression.codec")
    if text is None or str(text).strip() == "":
        return
    fmt, _, codec = (part.strip() for part in str(text).partition("-"))
    known = ", ".join(f"{f} - {c}" for f, c in CODECS)
    if (fmt.upper(), codec.lower()) not in CODECS:
        raise ConfigError("compression.codec", f"{text!r}: expected one of {known}")
    if fmt.upper() != d.upper("output.data.format"):
        raise ConfigError(
            "compression.codec",
            f"{text!r} is for {fmt.upper()} output, but output.data.format is {d.upper('output.data.format')}",
        )
    key, value = CODECS[(fmt.upper(), codec.lower())]
    d.set(key, value, "compression.codec")


def _time_interval(d: _Derived) -> None:
    interval = d.upper("time.interval")
    if interval is None:
        if "partitioner.class" not in d.given:
            raise ConfigError(
                "time.interval",
                f"is required with connector.class {CLOUD_CLASS} (HOURLY or DAILY), unless partitioner.class is set",
            )
        return
    if interval not in INTERVALS:
        raise ConfigError("time.interval", f"{d.given['time.interval']!r}: expected HOURLY or DAILY")
    duration, path = INTERVALS[interval]
    d.set("partitioner.class", PARTITIONER_CLASSES["time"][0], "time.interval")
    d.set("partition.duration.ms", str(duration), "time.interval")
    d.default("path.format", path, "time.interval")
    d.default("rotate.interval.ms", str(duration), "time.interval")
    extractor = "RecordField" if "timestamp.field" in d.given else "Record"
    d.default("timestamp.extractor", extractor, "timestamp.field" if "timestamp.field" in d.given else "time.interval")


def _cloud_defaults(d: _Derived) -> None:
    d.default("flush.size", str(CLOUD_FLUSH_SIZE), "connector.class")
    d.default("errors.tolerance", "all", "connector.class")
    if d.upper("errors.tolerance") in (None, "ALL") and not d.given.get("errors.deadletterqueue.s3.prefix"):
        d.default("errors.deadletterqueue.topic.name", f"dlq-{d.given.get('name', '')}", "connector.class")
        d.default("errors.deadletterqueue.context.headers.enable", "true", "connector.class")


def _check_identity(raw: Mapping[str, Any]) -> None:
    """Confluent Cloud's identities as this engine reads them. A service account (kafka.auth.mode SERVICE_ACCOUNT,
    kafka.service.account.id) is the identity Cloud's connector reads Kafka as; here that is the job's own (MSK IAM
    through its role, or the consumer.override.* security settings), as a provider integration's role is the job's
    own role for S3. The value is recorded; given with an API key it is a contradiction."""
    mode = str(raw.get("kafka.auth.mode", "KAFKA_API_KEY")).strip().upper()
    if mode not in ("KAFKA_API_KEY", "SERVICE_ACCOUNT", ""):
        raise ConfigError("kafka.auth.mode", f"{raw['kafka.auth.mode']!r}: expected KAFKA_API_KEY or SERVICE_ACCOUNT")
    if (mode == "SERVICE_ACCOUNT" or raw.get("kafka.service.account.id")) and raw.get("kafka.api.key"):
        key = "kafka.service.account.id" if raw.get("kafka.service.account.id") else "kafka.auth.mode"
        raise ConfigError(
            key, "a service account (the job's own Kafka identity here) and kafka.api.key are two identities; keep one"
        )
    method = str(raw.get("authentication.method", "Access Keys")).strip().lower()
    if method not in ("access keys", "iam roles", ""):
        raise ConfigError(
            "authentication.method", f"{raw['authentication.method']!r}: expected Access Keys or IAM Roles"
        )
    if method == "iam roles" and (raw.get("aws.access.key.id") or raw.get("aws.secret.access.key")):
        raise ConfigError(
            "authentication.method",
            "IAM Roles uses the job's own role; remove aws.access.key.id and aws.secret.access.key",
        )
    context = str(raw.get("schema.context.name", "default")).strip()
    if context not in ("default", ""):
        raise ConfigError(
            "schema.context.name", f"{context!r}: Schema Registry contexts other than the default are not supported"
        )


def _same(key: str, given: Any, implied: Any) -> bool:
    """Whether a value in the file says what the Cloud key implies (class spellings compared by class)."""
    spec = KEYS_BY_NAME.get(key)
    tables: dict[str, dict] = {
        "format.class": FORMAT_CLASSES,
        "keys.format.class": FORMAT_CLASSES,
        "headers.format.class": FORMAT_CLASSES,
        "value.converter": CONVERTER_CLASSES,
        "key.converter": CONVERTER_CLASSES,
        "partitioner.class": PARTITIONER_CLASSES,
        "s3.credentials.provider.class": CREDENTIALS_PROVIDER_CLASSES,
    }
    if key in tables:
        return _class_of(tables[key], given) == _class_of(tables[key], implied)
    a, b = str(given).strip().lower(), str(implied).strip().lower()
    return a == b or (spec is not None and spec.kind == "choice" and a.replace("_", "") == b.replace("_", ""))


def _class_of(table: dict, text: Any) -> str:
    text = str(text).strip()
    return next((canonical for canonical, spellings in table.items() if text in spellings), text)
