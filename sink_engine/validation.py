"""Checks of a parsed config that reach across seams: each builds what a run would build from its keys (the
partitioner, the Kafka client's authentication, the ByteArray separator, the target's own settings such as an
Iceberg table and its partition spec) or compares keys of different seams, so that `validate`, `run` and `cdk
synth` refuse what a Spark task would refuse, naming the key at fault. `config.parse_config` only parses, applies
defaults and checks what needs nothing above `config/`; every caller that accepts a config from a user calls
`check_config` on it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sink_engine.aws_types import S3Client, SecretsClient
from sink_engine.config import SinkConfig, WorkerSettings, load_config, parse_config
from sink_engine.config.cloud_registry import RegistryDefault
from sink_engine.config.collector import Collector
from sink_engine.config.converters import check_converter_settings
from sink_engine.errors import ConfigError
from sink_engine.format.bytearray_format import unescape
from sink_engine.format.settings import FormatSettings
from sink_engine.partition.registry import partitioner_for
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_buckets import parse_zone
from sink_engine.source.client_config import kafka_authentication
from sink_engine.source.settings import SourceSettings
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import S3Access
from sink_engine.target.choice import check_keys, target_for
from sink_engine.transform.settings import TransformSettings

# Credentials that come in pairs: one without the other is an error naming the missing one.
# a self-managed config's half pair of S3 keys is ignored before this (config._lone_static_key), as Confluent does
CREDENTIAL_PAIRS = (("aws.access.key.id", "aws.secret.access.key"), ("kafka.api.key", "kafka.api.secret"))


def check_config(config: SinkConfig) -> SinkConfig:
    """`config` itself when every check passes; otherwise ConfigError naming the key at fault (ConfigErrors with
    every failed check's, when several fail: the checks do not depend on each other)."""
    found = Collector()
    for check in (
        _check_output,
        check_converter_settings,
        _check_partitioning,
        _check_connection,
        _check_target,
        _check_transforms,
        _check_envelope,
    ):
        with found.check():
            check(config)
    found.raise_found()
    return config


def parse_checked_config(document: Mapping[str, Any]) -> SinkConfig:
    """`config.parse_config`, then `check_config`."""
    return check_config(parse_config(document))


def load_checked_config(
    location: str,
    s3_client: S3Client | None = None,
    resolve_secrets: bool = True,
    secrets_client_for: Callable[[str, str | None], SecretsClient] | None = None,
    registry: RegistryDefault | None = None,
    worker: WorkerSettings | None = None,
) -> SinkConfig:
    """`config.load_config`, then `check_config`."""
    return check_config(load_config(location, s3_client, resolve_secrets, secrets_client_for, registry, worker))


def _check_output(config: SinkConfig) -> None:
    """The ByteArray separator's escapes must be valid; a KMS key needs KMS encryption."""
    try:
        unescape(FormatSettings.from_config(config).bytearray_separator)
    except ValueError as e:
        raise ConfigError("format.bytearray.separator", str(e)) from None
    options = ObjectOptions.from_config(config)
    if options.kms_key_id and not options.sse.startswith("aws:kms"):
        raise ConfigError("s3.sse.kms.key.id", "is only used with s3.ssea.name=aws:kms (or aws:kms:dsse); set it")


def _check_partitioning(config: SinkConfig) -> None:
    """A bad `path.format`, `timezone` or field list fails here rather than inside a Spark task (any `locale` is
    valid, as Java's `new Locale(value)` is)."""
    partitioning = PartitionSettings.from_config(config)
    parse_zone(partitioning.timezone)
    partitioner_for(partitioning)


def _check_connection(config: SinkConfig) -> None:
    """Credentials that come in pairs, the Kafka client's authentication and the S3 client's credentials and proxy
    as a run builds them."""
    for first, second in CREDENTIAL_PAIRS:
        if bool(config[first]) != bool(config[second]):
            missing = second if config[first] else first
            raise ConfigError(missing, f"is required with {first if missing == second else second}")
    kafka_authentication(SourceSettings.from_config(config))
    S3Access.from_config(config)  # the S3 client's credentials provider and proxy


def _check_target(config: SinkConfig) -> None:
    """No key that only another target reads; then the target's own checks (target/contract.py `validate`)."""
    target = target_for(config)
    check_keys(config, target)
    target.validate()


def _check_transforms(config: SinkConfig) -> None:
    """Every transform and predicate is built from its options (a target may have refused some before:
    `_check_target`, e.g. Iceberg tables a router that routes by record)."""
    TransformSettings.from_config(config).build()


# Keys that would change or move EnvelopeFormat's records, with why they are refused when set.
_NOT_FOR_ENVELOPES = {
    "behavior.on.null.values": "tombstones are backed up as records with a null value, in their place",
    "tombstone.encoded.partition": "tombstones are backed up as records with a null value, in their place",
    "transforms": "a backup holds the records as Kafka has them",
    "store.kafka.keys": "each envelope holds the record's key",
    "store.kafka.headers": "each envelope holds the record's headers",
}


def _check_envelope(config: SinkConfig) -> None:
    """`format.envelope.encoding` only with EnvelopeFormat; with it, none of the keys that would change or move
    records (set explicitly: their defaults change nothing for this format)."""
    if FormatSettings.from_config(config).format_class != "envelope":
        if "format.envelope.encoding" in config.explicit:
            raise ConfigError("format.envelope.encoding", "is only used with format.class=EnvelopeFormat")
        return
    for key, why in _NOT_FOR_ENVELOPES.items():
        if key in config.explicit and config[key] not in ((), False):
            raise ConfigError(key, f"does not apply with format.class=EnvelopeFormat ({why}); remove it")
