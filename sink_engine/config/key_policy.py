"""What happens to a key that config/keys.py does not declare: accepted as harmless, refused, or unknown.

A connector file carries Kafka Connect framework keys and converter settings that only serializers read; they
change nothing that a run does here, so they are accepted, and `validate` lists them as having no effect. A key
of a feature the engine does not have is refused unless set to its off value. Any other undeclared key is an
error naming it: a key that asks for a behaviour the engine does not have never passes as a warning.
"""
from __future__ import annotations

from typing import Any, Mapping

from sink_engine.config.keys import NOT_BUILT_YET
from sink_engine.errors import ConfigError

_NEXT_RUN = "a failed run here exits and the next run retries"
_SERIALIZER = "a serializer setting; the sink only deserializes"

# key -> why it has no effect here
ACCEPTED_UNUSED: dict[str, str] = {
    "config.action.reload": "Kafka Connect restarts a connector whose config changed; each run reads its config anew",
    "errors.retry.timeout": f"Kafka Connect retries a failed operation for this long; {_NEXT_RUN}",
    "errors.retry.delay.max.ms": f"Kafka Connect's wait between retries; {_NEXT_RUN}",
    "retry.backoff.ms": f"the connector's wait before Connect redelivers a batch; {_NEXT_RUN}",
    "shutdown.timeout.ms": "how long the connector waits for uploads at shutdown; a run ends after its uploads",
    "schema.cache.size": "the size of the connector's schema cache; the engine sizes its own",
    "s3.http.send.expect.continue": "an HTTP detail of the Java AWS SDK",
    "s3.path.style.access.enabled": "an addressing detail of the Java AWS SDK; boto3 chooses the style",
    "s3.elastic.buffer.enable": "the Java connector's buffer growth; files stream to S3 here (s3.part.size)",
    "s3.elastic.buffer.init.capacity": "the Java connector's buffer growth; files stream to S3 here (s3.part.size)",
    **{f"{role}.converter.{key}": _SERIALIZER for role in ("value", "key")
       for key in ("auto.register.schemas", "use.latest.version", "latest.compatibility.strict",
                   "normalize.schemas")},
}
# key -> (the values accepted, why): other values ask for something the engine does not do
ACCEPTED_VALUES: dict[str, tuple[tuple[str, ...], str]] = {
    "storage.class": (("io.confluent.connect.s3.storage.S3Storage",), "S3 is the only storage"),
    "s3.credentials.provider.class": (("com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
                                       "DefaultAWSCredentialsProviderChain"),
                                      "boto3's default credential chain (the job's role) is used; "
                                      "aws.access.key.id and aws.secret.access.key set static keys"),
    **{f"{role}.converter.{role}.subject.name.strategy": (
        ("io.confluent.kafka.serializers.subject.TopicNameStrategy", "TopicNameStrategy"),
        f"schema versions are looked up under <topic>-{role}, as TopicNameStrategy names them")
       for role in ("value", "key")},
}
# key -> the feature it turns on, which is not built: an error unless set to an off value
REFUSED_UNLESS_OFF: dict[str, str] = {
    "s3.wan.mode": "S3 Transfer Acceleration",
    "s3.proxy.url": "an HTTP proxy for S3",
    "s3.proxy.user": "an HTTP proxy for S3",
    "s3.proxy.password": "an HTTP proxy for S3",
    "s3.sse.customer.key": "customer-provided encryption keys (SSE-C)",
    "s3.schema.partition.affix.type": "schema names in the object path",
    "hive.integration": "Hive metastore tables (the deployed stack declares Glue tables instead)",
    "enhanced.avro.schema.support": "Avro enums and schema docs kept as such in the output",
    **{f"{role}.converter.{key}": feature for role in ("value", "key") for key, feature in (
        ("int.for.enums", "ProtobufConverter's enums as int32 (they are strings here, its default)"),
        ("generalized.sum.type.support", "generalized sum types for oneofs and unions"),
        ("enhanced.protobuf.schema.support", "Protobuf package names and enums kept as such in the output"),
        ("scrub.invalid.names", "Protobuf field names rewritten to valid Avro names"))},
}
_OFF = {"", "-1", "false", "none", "null"}


def undeclared_keys(raw: Mapping[str, Any], declared: Mapping[str, Any], passthrough: tuple[str, ...]) -> tuple[str, ...]:
    """The undeclared keys of `raw` that are accepted and unused, sorted. ConfigError names the first key that is
    refused or unknown."""
    unused = []
    for key in sorted(raw):
        if key in declared or key.startswith(passthrough):
            continue
        value = str(raw[key]).strip()
        if key in ACCEPTED_UNUSED:
            unused.append(key)
        elif key in ACCEPTED_VALUES:
            accepted, why = ACCEPTED_VALUES[key]
            if value not in accepted:
                raise ConfigError(key, f"{value!r} is not supported: {why} (accepted: {', '.join(accepted)})")
            unused.append(key)
        elif key in NOT_BUILT_YET:  # set to its off value: config/__init__.py refused the others
            unused.append(key)
        elif key in REFUSED_UNLESS_OFF:
            if value.lower() in _OFF:
                unused.append(key)
                continue
            raise ConfigError(key, f"{REFUSED_UNLESS_OFF[key]} is not supported; remove the key or set it to its off "
                                   "value")
        else:
            raise ConfigError(key, "is not a key this engine knows; a key that would be ignored is refused rather "
                                   "than skipped (see `sink-engine validate` and the README's Configuration tables)")
    return tuple(unused)


def why_unused(key: str) -> str:
    """Why an accepted key changes nothing here."""
    if key in ACCEPTED_UNUSED:
        return ACCEPTED_UNUSED[key]
    if key in ACCEPTED_VALUES:
        return ACCEPTED_VALUES[key][1]
    return "set to its off value"
