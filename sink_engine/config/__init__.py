"""Connector config: parse the Confluent S3 sink JSON into a typed `SinkConfig` with every default applied.

Parsing checks each key's value and the combinations that need nothing above `config/` (the topics, the
connector class, the dead-letter destination); the checks that build a seam's parts to judge its keys are
`sink_engine.validation.check_config`'s, which every caller that takes a config from a user runs next."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, overload

from sink_engine.aws_types import S3Client, SecretsClient
from sink_engine.config.cloud import CLOUD_CLASS, CLOUD_KEY_IGNORED, derive, is_cloud
from sink_engine.config.cloud_registry import RegistryDefault
from sink_engine.config.collector import Collector
from sink_engine.config.dead_letters import check_dead_letter_settings
from sink_engine.config.document import read_document
from sink_engine.config.key_policy import IgnoredKey, undeclared_keys
from sink_engine.config.key_types import (
    BoolKey,
    IntKey,
    ListKey,
    OptionalListKey,
    OptionalTextKey,
    TextKey,
)
from sink_engine.config.keys import (
    KEYS,
    KEYS_BY_NAME,
    NOT_BUILT_YET,
    OFF_VALUES,
    PASSTHROUGH_PREFIXES,
)
from sink_engine.config.lint import ConfigWarning, lint
from sink_engine.config.values import parse_value
from sink_engine.config.worker import WorkerSettings, with_worker_converters, worker_brokers
from sink_engine.errors import ConfigError, OptionError
from sink_engine.secrets import config_map, default_client_for, references, resolve

__all__ = ["SinkConfig", "WorkerSettings", "parse_config", "load_config"]


@dataclass(frozen=True)
class SinkConfig:
    """Validated connector config. `values` holds every declared key with its typed effective value; `unknown`
    the undeclared keys known and accepted as having no effect here; `ignored` the keys no one knows, each with
    why and a suggestion (config/key_policy.py; the other undeclared keys are refused); `derived` the keys whose
    value another key implies (Confluent Cloud's, config/cloud.py), or the worker sets (`bootstrap.servers`), each
    with where from; `worker` the Kafka Connect worker's settings (config/worker.py); `warnings` what is taken as
    written while it is most likely a mistake (config/lint.py, duplicate keys)."""

    values: Mapping[str, object]
    explicit: frozenset[str]
    passthrough: Mapping[str, str]
    unknown: tuple[str, ...]
    derived: Mapping[str, str] = field(default_factory=dict)
    ignored: tuple[IgnoredKey, ...] = ()
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    warnings: tuple[ConfigWarning, ...] = ()

    @overload
    def __getitem__(self, key: TextKey) -> str: ...
    @overload
    def __getitem__(self, key: OptionalTextKey) -> str | None: ...
    @overload
    def __getitem__(self, key: IntKey) -> int: ...
    @overload
    def __getitem__(self, key: BoolKey) -> bool: ...
    @overload
    def __getitem__(self, key: ListKey) -> tuple[str, ...]: ...
    @overload
    def __getitem__(self, key: OptionalListKey) -> tuple[str, ...] | None: ...
    @overload
    def __getitem__(self, key: str) -> object: ...
    def __getitem__(self, key: str) -> object:
        """The typed value of `key`, its type by key (config/key_types.py); a key named at run time is `object`."""
        return self.values[key]

    def optional_text(self, key: str) -> str | None:
        """The value of a text key named at run time (a string, choice or class key; None when unset and its default
        is None); TypeError naming the key when it holds another type (a caller's mistake, not the user's)."""
        value = self.values[key]
        if value is None or isinstance(value, str):
            return value
        raise TypeError(f"config key {key} holds {type(value).__name__}, not text")

    def text(self, key: str) -> str:
        """The value of a text key named at run time whose default is not None; TypeError naming the key else."""
        value = self.optional_text(key)
        if value is None:
            raise TypeError(f"config key {key} is unset, not text")
        return value

    @property
    def name(self) -> str:
        return self["name"]

    def values_of(self, keys: Iterable[str]) -> dict[str, object]:
        """The typed values of `keys`, by name: for what hands keys on by name (the connector index the trigger
        Lambda reads); code that acts on a key reads it through its seam's settings (`from_config`)."""
        return {key: self.values[key] for key in keys}

    def consumer_overrides(self) -> dict[str, str]:
        """`consumer.override.*` keys with the prefix removed, for the Kafka client."""
        prefix = "consumer.override."
        return {k[len(prefix) :]: v for k, v in self.passthrough.items() if k.startswith(prefix)}

    def topic_matches(self, topic: str) -> bool:
        topics, regex = self["topics"], self["topics.regex"]
        if topics is not None:
            return topic in topics
        return regex is not None and re.fullmatch(regex, topic) is not None  # parsing set one of the two

    def effective(self) -> list[tuple[str, object, str]]:
        """(key, value, origin) for every key, origin 'set', 'default' or 'from <key>', passthrough keys last."""
        rows = [(k.name, self.values[k.name], self._origin(k.name)) for k in KEYS]
        rows += [(k, v, "set") for k, v in sorted(self.passthrough.items())]
        return rows

    def _origin(self, key: str) -> str:
        if key in self.explicit:
            return "set"
        return f"from {self.derived[key]}" if key in self.derived else "default"


def load_config(
    location: str,
    s3_client: S3Client | None = None,
    resolve_secrets: bool = True,
    secrets_client_for: Callable[[str, str | None], SecretsClient] | None = None,
    registry: RegistryDefault | None = None,
    worker: WorkerSettings | None = None,
) -> SinkConfig:
    """Read a connector JSON file from a local path or an `s3://bucket/key` URI and parse it. With
    `resolve_secrets`, `${secrets:...}` and `${ssm:...}` references are replaced by their values from AWS Secrets
    Manager and SSM Parameter Store first (`secrets_client_for(service, region)` gives their clients; see
    sink_engine/secrets.py); without, they are only checked. `registry` and `worker`: as parse_config's."""
    if location.startswith("s3://"):
        import boto3

        bucket, _, key = location[len("s3://") :].partition("/")
        client = s3_client or boto3.client("s3")
        data = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    else:
        try:
            with open(location, "rb") as f:
                data = f.read()
        except OSError as e:
            raise OptionError("--config", f"cannot read the connector file {location}: {e.strerror}") from e
    document, warnings = read_document(data, location)
    if resolve_secrets and isinstance(document, Mapping):
        document = resolve(document, secrets_client_for or default_client_for(config_map(document)))
    return parse_config(document, registry, worker, warnings)


def parse_config(
    document: Mapping[str, Any],
    registry: RegistryDefault | None = None,
    worker: WorkerSettings | None = None,
    warnings: tuple[ConfigWarning, ...] = (),
) -> SinkConfig:
    """Accept `{"name": ..., "config": {...}}` or the flat map; parse every key, raising every error found in one
    pass, each naming its key (ConfigErrors when there are several; the checks across seams are
    `sink_engine.validation.check_config`'s). `registry` is the Schema Registry of a Confluent Cloud config whose
    file names none (config/cloud_registry.py); `worker` the Kafka Connect worker's settings, where
    `bootstrap.servers` comes from when the connector does not set it; `warnings` those of the file itself."""
    if not isinstance(document, Mapping):
        raise OptionError("--config", "the connector config must be a JSON object")
    raw = dict(document["config"]) if isinstance(document.get("config"), Mapping) else dict(document)
    if "name" in document and "name" not in raw:
        raw["name"] = document["name"]
    worker = worker or WorkerSettings()
    converters = {} if is_cloud(raw) else worker.converters(raw)  # Confluent Cloud chooses its own converters
    raw, unheeded = with_worker_converters(raw, converters)
    found = Collector()
    warnings += lint(raw, found)
    with found.check():
        references(raw)  # a malformed ${secrets:...} or ${ssm:...} reference fails here, naming its key
    try:
        raw, derived, cloud_keys = derive(raw, registry)
    except ConfigError as e:  # the keys a Cloud config implies are unknown: nothing further can be judged
        found.errors.append(e)
        found.raise_found()
    derived = {**derived, **{key: where for key, (_, where) in converters.items()}}
    given = frozenset(raw) - frozenset(derived)
    _reject_not_built(raw, found)
    unknown, ignored = undeclared_keys(raw, KEYS_BY_NAME, PASSTHROUGH_PREFIXES, found)
    ignored = tuple(
        sorted(
            ignored + tuple(IgnoredKey(key, CLOUD_KEY_IGNORED, None) for key in cloud_keys) + unheeded,
            key=lambda i: i.key,
        )
    )
    values, judged = {}, {e.key for e in found.errors}  # a key refused as written is not judged again
    for k in KEYS:
        with found.check(), _blaming(derived, raw):
            values[k.name] = None if k.name in judged else parse_value(k, raw.get(k.name))
    found.raise_found()
    values, derived = worker_brokers(values, derived, worker)
    values, derived = _upsert_tombstones(values, derived, given)
    passthrough = {k: str(v) for k, v in raw.items() if k.startswith(PASSTHROUGH_PREFIXES) and k not in KEYS_BY_NAME}
    values, lone_key = _lone_static_key(values)
    config = SinkConfig(
        values,
        frozenset(k for k in given if k in KEYS_BY_NAME),
        passthrough,
        unknown,
        derived,
        ignored + lone_key,
        worker,
        warnings,
    )
    with _blaming(derived, raw):
        _check_combinations(config)
    return config


def _upsert_tombstones(
    values: dict[str, Any], derived: dict[str, str], given: frozenset[str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """In an upsert table (`iceberg.tables.upsert-mode-enabled`) a tombstone deletes the row its key names:
    `behavior.on.null.values` not written defaults to `write` there, as Debezium's default stream (a tombstone after
    each delete, `tombstones.on.delete`) needs; a written `fail` or `ignore` is honoured. Not with fan-out by field
    (`iceberg.tables.dynamic-enabled`): a tombstone has no value to name its table, so `fail` stays the default. The
    upsert key alone decides (no format.class test: only target/choice.py asks which target a config writes, and a
    target other than Iceberg tables refuses `iceberg.*` keys)."""
    key = "behavior.on.null.values"
    if key in given or not values["iceberg.tables.upsert-mode-enabled"] or values["iceberg.tables.dynamic-enabled"]:
        return values, derived
    return {**values, key: "write"}, {
        **derived,
        key: "iceberg.tables.upsert-mode-enabled (a tombstone deletes its row)",
    }


def _lone_static_key(values: dict[str, Any]) -> tuple[dict[str, Any], tuple[IgnoredKey, ...]]:
    """One of `aws.access.key.id` / `aws.secret.access.key` without the other: Confluent's connector then uses the
    default credentials chain (S3SinkConnectorConfig.getCredentialsProvider takes static keys only as a pair), and
    so does the engine; the lone key is ignored and reported. With AwsAccessKeyCredentialsProvider, and in a
    Confluent Cloud config (Access Keys), both stay required (storage/credentials.py, validation.py)."""
    key_id, secret = values["aws.access.key.id"], values["aws.secret.access.key"]
    if (
        bool(key_id) == bool(secret)
        or values["s3.credentials.provider.class"] == "accesskey"
        or values["connector.class"] == CLOUD_CLASS
    ):
        return values, ()
    lone, missing = (
        ("aws.access.key.id", "aws.secret.access.key") if key_id else ("aws.secret.access.key", "aws.access.key.id")
    )
    reason = (
        f"{lone} without {missing}: the S3 client uses the default credentials chain, as Confluent's "
        "connector does with half a pair"
    )
    return {**values, lone: None}, (IgnoredKey(lone, reason, missing),)


@contextmanager
def _blaming(derived: Mapping[str, str], raw: Mapping[str, Any]) -> Iterator[None]:
    """A ConfigError about a derived key names the key the user wrote (`input.data.format`, not
    `value.converter`), saying which value it implied."""
    try:
        yield
    except ConfigError as e:
        if e.key not in derived:
            raise
        source = derived[e.key]
        raise ConfigError(source, f"{raw.get(source)} means {e.key}={raw.get(e.key)}, which is refused: {e}") from None


def _reject_not_built(raw: Mapping[str, Any], found: Collector) -> None:
    for key, feature in NOT_BUILT_YET.items():
        if key in raw and str(raw[key]).strip().lower() not in OFF_VALUES:
            found.errors.append(
                ConfigError(key, f"{feature} is not built yet; remove the key or leave it at its off value")
            )


# DynamoDB's limit on a partition key value, which the connector's name is (offsets/layout.py):
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys
MAX_NAME_BYTES = 2048


def _check_combinations(config: SinkConfig) -> None:
    found = Collector()
    with found.check():
        _check_name(config.name)
    with found.check():
        _check_topics(config["topics"], config["topics.regex"])
    with found.check():
        check_dead_letter_settings(config)
    found.raise_found()


def _check_name(name: str) -> None:
    name_bytes = len(name.encode("utf-8"))
    if not name.strip() or name_bytes > MAX_NAME_BYTES:
        raise ConfigError(
            "name",
            f"must be 1 to {MAX_NAME_BYTES} bytes of UTF-8 (it is the DynamoDB partition key of "
            f"the connector's offsets and lease); it is {name_bytes}",
        )


def _check_topics(topics: tuple[str, ...] | None, regex: str | None) -> None:
    if (topics is None) == (regex is None):
        raise ConfigError("topics", "set exactly one of topics and topics.regex")
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as e:
            raise ConfigError("topics.regex", f"not a valid regular expression: {e}") from e
