"""A Kafka Connect worker's settings: what `connect-distributed.properties` holds and a connector JSON never does.

Kafka Connect takes a sink's Kafka connection from its worker (apache/kafka, connect/runtime/.../Worker.java,
`baseConsumerConfigs`): the worker's `bootstrap.servers`, then its `consumer.`-prefixed settings, then the
connector's `consumer.override.*`, each over the one before. The engine reads the same layers, from:

- a worker properties file (`--worker FILE`), Connect's own keys;
- environment variables named as Confluent's Docker images name them ("Docker Image Configuration Reference for
  Confluent Platform", https://docs.confluent.io/platform/current/installation/docker/config-reference.html):
  `CONNECT_` and the key in upper case, `.` as `_`, `-` as `__`, `_` as `___` (`CONNECT_BOOTSTRAP_SERVERS`,
  `CONNECT_CONSUMER_SASL_MECHANISM`); a key the file sets keeps the file's value;
- a deployed job's MSK cluster (`SINK_MSK_CLUSTER_ARN`, set by the stack from `msk.cluster_arn`), whose brokers a run
  asks for when nothing else names them (source/msk_brokers.py).

Used here: `bootstrap.servers`; `security.protocol`, `sasl.*`, `ssl.*` and `consumer.*` for the consumer (and the
dead-letter and restore producers, which take the consumer's connection); `key.converter` and `value.converter`
with their options, for a self-managed connector that names no converter of its own (as Connect does). Unlike
Connect, the worker's top-level security settings reach the consumer when `consumer.*` does not set them (Connect
applies them to the worker's own clients only; a worker file that works with Connect sets both, with the same result
here). `producer.*` and every other worker key change nothing here; `validate` counts them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sink_engine.config.key_policy import IgnoredKey
from sink_engine.config.keys import KEYS_BY_NAME
from sink_engine.config.properties import parse_properties
from sink_engine.config.values import parse_list
from sink_engine.errors import ConfigError, OptionError

ENV_PREFIX = "CONNECT_"
CLUSTER_ENV = "SINK_MSK_CLUSTER_ARN"
WORKER_OPTION = "--worker"
_CLIENT_PREFIXES = ("security.protocol", "sasl.", "ssl.")
_CONSUMER = "consumer."
_ENV_SEPARATORS = {1: ".", 2: "-", 3: "_"}
_CONVERTERS = ("key.converter", "value.converter")


@dataclass(frozen=True)
class WorkerSettings:
    """The worker's `properties` by key, each key's origin (the file's name, or its environment variable) in
    `origins`; `cluster_arn`: the MSK cluster whose bootstrap brokers a run takes when no setting names them."""

    properties: Mapping[str, str] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict)
    cluster_arn: str | None = None

    def where(self, key: str) -> str:
        """Where `key` was set, for messages: `consumer.sasl.mechanism of worker.properties`, or its environment
        variable (`$CONNECT_CONSUMER_SASL_MECHANISM`)."""
        origin = self.origins.get(key, "the worker settings")
        return origin if origin.startswith("$") else f"{key} of {origin}"

    def bootstrap_servers(self) -> tuple[str, str] | None:
        """(servers, where) of `consumer.bootstrap.servers`, else `bootstrap.servers`; None when neither is set."""
        for key in (_CONSUMER + "bootstrap.servers", "bootstrap.servers"):
            if self.properties.get(key, "").strip():
                return self.properties[key], self.where(key)
        return None

    def client_settings(self) -> dict[str, tuple[str, str]]:
        """The consumer's settings by client name, each with where it was set: the top-level security settings,
        then `consumer.*` over them (`consumer.bootstrap.servers` is bootstrap_servers')."""
        found = {k: (v, self.where(k)) for k, v in self.properties.items() if k.startswith(_CLIENT_PREFIXES)}
        for key, value in self.properties.items():
            name = key[len(_CONSUMER) :]
            if key.startswith(_CONSUMER) and name != "bootstrap.servers":
                found[name] = (value, self.where(key))
        return found

    def converters(self, connector: Mapping[str, object]) -> dict[str, tuple[str, str]]:
        """The worker's `key.converter` and `value.converter`, each with its `<role>.converter.*` options and where
        it was set, for the roles whose converter the `connector` map does not name: as in Connect, a connector
        without its own converter gets the worker's, with the worker's options (Worker.startTask)."""
        found: dict[str, tuple[str, str]] = {}
        for name in _CONVERTERS:
            if name in connector or not self.properties.get(name, "").strip():
                continue
            found.update(
                {k: (v, self.where(k)) for k, v in self.properties.items() if k == name or k.startswith(name + ".")}
            )
        return found

    def unused(self) -> tuple[str, ...]:
        """The keys that change nothing here (producer.*, the worker's own: group.id, the storage topics, ...)."""
        used = ("bootstrap.servers", _CONSUMER, *_CLIENT_PREFIXES, *_CONVERTERS)
        return tuple(sorted(k for k in self.properties if not k.startswith(used)))


def read_worker(path: str | None, environ: Mapping[str, str]) -> WorkerSettings:
    """The worker settings of the file at `path` (None: none), the `CONNECT_*` variables of `environ` for the keys
    the file does not set, and `environ`'s SINK_MSK_CLUSTER_ARN. OptionError naming `--worker` when the file cannot
    be read."""
    properties: dict[str, str] = {}
    origins: dict[str, str] = {}
    for key, value in from_environment(environ).items():
        properties[key], origins[key] = value, f"${_env_name(key)}"
    if path is not None:
        file_properties = _read_file(path)
        properties.update(file_properties)
        origins.update(dict.fromkeys(file_properties, path))
    return WorkerSettings(properties, origins, (environ.get(CLUSTER_ENV) or "").strip() or None)


def from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The worker keys the `CONNECT_*` variables of `environ` set, by key."""
    return {_key_of(name[len(ENV_PREFIX) :]): value for name, value in environ.items() if name.startswith(ENV_PREFIX)}


def _key_of(suffix: str) -> str:
    return re.sub("_{1,3}", lambda m: _ENV_SEPARATORS[len(m.group())], suffix).lower()


def _env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace("_", "___").replace("-", "__").replace(".", "_")


def _read_file(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise OptionError(WORKER_OPTION, f"cannot read the worker file {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise OptionError(WORKER_OPTION, f"the worker file {path} is not UTF-8 text (byte {e.start})") from None
    return parse_properties(text)


def with_worker_converters(
    raw: dict[str, Any], converters: Mapping[str, tuple[str, str]]
) -> tuple[dict[str, Any], tuple[IgnoredKey, ...]]:
    """`raw` with the worker's converters (and their options) for the roles it names none of; its own options of
    those roles are left out and reported, as Connect configures the worker's converter with the worker's options
    only (Worker.startTask)."""
    roles = {key for key in converters if key in ("key.converter", "value.converter")}
    unheeded = tuple(
        IgnoredKey(
            key,
            f"the connector names no {key.split('.')[0]}.converter, so the worker's is used with the "
            "worker's options only, as Kafka Connect does",
            None,
        )
        for key in sorted(raw)
        if any(key.startswith(role + ".") for role in roles) and key not in converters
    )
    kept = {k: v for k, v in raw.items() if k not in {u.key for u in unheeded}}
    return {**kept, **{key: value for key, (value, _) in converters.items()}}, unheeded


def worker_brokers(
    values: dict[str, Any], derived: Mapping[str, str], worker: WorkerSettings
) -> tuple[dict[str, Any], dict[str, str]]:
    """`bootstrap.servers` from the worker when the connector does not set it (a Connect worker's own setting):
    its `consumer.bootstrap.servers` or `bootstrap.servers`, else the MSK cluster's brokers, asked for at run time
    (an empty tuple until then: source/msk_brokers.py). ConfigError when nothing names them."""
    if values["bootstrap.servers"] is not None:
        return values, dict(derived)
    given = worker.bootstrap_servers()
    if given is not None:
        servers, where = given
        return {**values, "bootstrap.servers": parse_list(KEYS_BY_NAME["bootstrap.servers"], servers)}, {
            **derived,
            "bootstrap.servers": where,
        }
    if worker.cluster_arn is not None:
        where = f"the brokers of MSK cluster {worker.cluster_arn}, asked for at run time"
        return {**values, "bootstrap.servers": ()}, {**derived, "bootstrap.servers": where}
    raise ConfigError(
        "bootstrap.servers",
        "is not set: Kafka Connect takes it from the worker, not the connector; name the brokers in a worker file "
        "(--worker connect-distributed.properties), in CONNECT_BOOTSTRAP_SERVERS, or in the connector file",
    )
