"""What happens to a key that config/keys.py does not declare: accepted as having no effect, refused, or ignored.

A connector file carries Kafka Connect framework keys, worker keys and converter settings that change nothing a
run does here; they are accepted, and `validate` lists them as having no effect (this module's tables and
config/confluent_keys.py). A key whose value turns on a feature the engine does not have is refused unless set to
its off value (or, for a converter option, Confluent's default). Any other key is unknown to Kafka Connect too,
which logs it and runs on: it is ignored here as well and reported (`validate`, the CONFIG_KEY_IGNORED event, a
`cdk synth` warning), with the known key it most resembles.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from sink_engine.config.collector import Collector
from sink_engine.config.confluent_keys import (
    CONVERTER_NO_EFFECT,
    DEFAULT_ONLY,
    LOOK_ALIKES,
    NO_EFFECT,
    converter_option,
    prefix_reason,
)
from sink_engine.config.keys import NOT_BUILT_YET
from sink_engine.errors import ConfigError

_NEXT_RUN = "a failed run here exits and the next run retries"

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
    **NO_EFFECT,
}
# key -> (the values accepted, why): other values ask for something the engine does not do
ACCEPTED_VALUES: dict[str, tuple[tuple[str, ...], str]] = {
    "storage.class": (("io.confluent.connect.s3.storage.S3Storage",), "S3 is the only storage"),
}
# key -> the feature it turns on, which is not built: an error unless set to an off value
REFUSED_UNLESS_OFF: dict[str, str] = {
    "s3.wan.mode": "S3 Transfer Acceleration",
    "s3.sse.customer.key": "customer-provided encryption keys (SSE-C)",
    "s3.schema.partition.affix.type": "schema names in the object path",
    "hive.integration": "Hive metastore tables (the deployed stack declares Glue tables instead)",
    "enhanced.avro.schema.support": "Avro enums and schema docs kept as such in the output",
    "s3.object.tagging.key.value.pairs": "extra tags on every object",
    "report.null.values.to.dlq": "skipped tombstones reported to the dead-letter queue",
    "csfle.enabled": "client-side field level encryption (CSFLE)",
    **{
        f"{role}.converter.{key}": feature
        for role in ("value", "key")
        for key, feature in (
            ("int.for.enums", "ProtobufConverter's enums as int32 (they are strings here, its default)"),
            ("generalized.sum.type.support", "generalized sum types for oneofs and unions"),
            ("enhanced.protobuf.schema.support", "Protobuf package names and enums kept as such in the output"),
            ("scrub.invalid.names", "Protobuf field names rewritten to valid Avro names"),
        )
    },
}
_OFF = {"", "-1", "false", "none", "null"}


IGNORED = "unknown to the S3 sink, Kafka Connect and this engine (Kafka Connect ignores it too)"
IGNORED_CONVERTER = "a converter setting this engine does not read (the Java converter may)"


@dataclass(frozen=True)
class IgnoredKey:
    """An undeclared key no table knows: ignored, with why and the known key it most resembles (or None)."""

    key: str
    reason: str
    suggestion: str | None

    def describe(self) -> str:
        return self.reason + (f"; did you mean `{self.suggestion}`?" if self.suggestion else "")


class UndeclaredKeys(NamedTuple):
    unused: tuple[str, ...]  # known, accepted, no effect here (why_unused says why)
    ignored: tuple[IgnoredKey, ...]  # unknown, ignored


def undeclared_keys(
    raw: Mapping[str, Any], declared: Mapping[str, Any], passthrough: tuple[str, ...], found: Collector
) -> UndeclaredKeys:
    """The undeclared keys of `raw`, sorted: accepted and unused, or unknown and ignored. Each key that is refused
    is a ConfigError added to `found`."""
    unused, ignored = [], []
    for key in sorted(raw):
        if key in declared or key.startswith(passthrough):
            continue
        with found.check():
            if _accepted(key, str(raw[key]).strip()):
                unused.append(key)
            else:
                reason = IGNORED_CONVERTER if converter_option(key) else IGNORED
                ignored.append(IgnoredKey(key, reason, suggestion(key, declared)))
    return UndeclaredKeys(tuple(unused), tuple(ignored))


def _accepted(key: str, value: str) -> bool:
    """True for a key known to have no effect here at `value`; False for a key no one knows; ConfigError for a key
    whose value asks for what the engine does not do."""
    if key in ACCEPTED_UNUSED or prefix_reason(key) or _converter_no_effect(key):
        return True
    if key in ACCEPTED_VALUES:
        accepted, why = ACCEPTED_VALUES[key]
        if value not in accepted:
            raise ConfigError(key, f"{value!r} is not supported: {why} (accepted: {', '.join(accepted)})")
        return True
    if key in DEFAULT_ONLY:
        default, feature = DEFAULT_ONLY[key]
        if value.lower() != default:
            raise ConfigError(
                key, f"{feature} is not supported; remove the key or set it to {default} (Confluent's default)"
            )
        return True
    if key in NOT_BUILT_YET:  # set to its off value: config/__init__.py refused the others
        return True
    if key in REFUSED_UNLESS_OFF:
        if value.lower() in _OFF:
            return True
        raise ConfigError(key, f"{REFUSED_UNLESS_OFF[key]} is not supported; remove the key or set it to its off value")
    return False


def known_keys(declared: Mapping[str, Any]) -> frozenset[str]:
    """Every key a connector file may carry that is not ignored: declared, or known to one of the tables."""
    converter_options = (f"{role}.converter.{option}" for role in ("value", "key") for option in CONVERTER_NO_EFFECT)
    return frozenset(
        (
            *declared,
            *ACCEPTED_UNUSED,
            *ACCEPTED_VALUES,
            *DEFAULT_ONLY,
            *NOT_BUILT_YET,
            *REFUSED_UNLESS_OFF,
            *converter_options,
        )
    )


def suggestion(key: str, declared: Mapping[str, Any]) -> str | None:
    """The known key `key` stands for (LOOK_ALIKES; a worker's `consumer.<x>`: `consumer.override.<x>`), ends with
    after a dot (`s3.sink.flush.size`: the longest), or most resembles (difflib), else None."""
    if key in LOOK_ALIKES:
        return LOOK_ALIKES[key]
    if key.startswith("consumer."):
        return "consumer.override." + key[len("consumer.") :]
    known = sorted(known_keys(declared))
    endings = [k for k in known if key.endswith("." + k)]
    if endings:
        return max(endings, key=len)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    return close[0] if close else None


def _converter_no_effect(key: str) -> bool:
    option = converter_option(key)
    return option is not None and option[1] in CONVERTER_NO_EFFECT


def why_unused(key: str) -> str:
    """Why an accepted key changes nothing here."""
    if key in ACCEPTED_UNUSED:
        return ACCEPTED_UNUSED[key]
    if reason := prefix_reason(key):
        return reason
    if (option := converter_option(key)) is not None and option[1] in CONVERTER_NO_EFFECT:
        return CONVERTER_NO_EFFECT[option[1]]
    if key in ACCEPTED_VALUES:
        return ACCEPTED_VALUES[key][1]
    if key in DEFAULT_ONLY:
        return f"set to Confluent's default ({DEFAULT_ONLY[key][0]}), which is how the engine reads"
    return "set to its off value"
