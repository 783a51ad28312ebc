"""Connector config: parse the Confluent S3 sink JSON into a validated, typed `SinkConfig`."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from sink_engine.config.keys import (
    KEYS,
    KEYS_BY_NAME,
    NOT_BUILT_YET,
    OFF_VALUES,
    PASSTHROUGH_PREFIXES,
    REQUIRED,
    Key,
)
from sink_engine.config.dead_letters import check_dead_letter_settings
from sink_engine.config.output_settings import check_output_settings
from sink_engine.config.converters import check_converter_settings
from sink_engine.config.iceberg import check_iceberg_settings
from sink_engine.config.partitioning import check_partitioning_settings
from sink_engine.errors import ConfigError

__all__ = ["SinkConfig", "parse_config", "load_config"]


@dataclass(frozen=True)
class SinkConfig:
    """Validated connector config. `values` holds every declared key with its typed effective value."""

    values: Mapping[str, Any]
    explicit: frozenset[str]
    passthrough: Mapping[str, str]
    unknown: tuple[str, ...]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def name(self) -> str:
        return self.values["name"]

    def consumer_overrides(self) -> dict[str, str]:
        """`consumer.override.*` keys with the prefix removed, for the Kafka client."""
        prefix = "consumer.override."
        return {k[len(prefix):]: v for k, v in self.passthrough.items() if k.startswith(prefix)}

    def topic_matches(self, topic: str) -> bool:
        if self.values["topics"] is not None:
            return topic in self.values["topics"]
        return re.fullmatch(self.values["topics.regex"], topic) is not None

    def effective(self) -> list[tuple[str, Any, str]]:
        """(key, value, origin) for every key, origin 'set' or 'default', passthrough keys last."""
        rows = [(k.name, self.values[k.name], "set" if k.name in self.explicit else "default") for k in KEYS]
        rows += [(k, v, "set") for k, v in sorted(self.passthrough.items())]
        return rows


def load_config(location: str, s3_client=None) -> SinkConfig:
    """Read a connector JSON file from a local path or an `s3://bucket/key` URI and parse it."""
    if location.startswith("s3://"):
        import boto3

        bucket, _, key = location[len("s3://"):].partition("/")
        client = s3_client or boto3.client("s3")
        text = client.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
    else:
        try:
            with open(location, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ConfigError("--config", f"cannot read {location}: {e.strerror}") from e
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError("--config", f"{location} is not valid JSON: {e}") from e
    return parse_config(document)


def parse_config(document: Mapping[str, Any]) -> SinkConfig:
    """Accept `{"name": ..., "config": {...}}` or the flat map; validate every key, naming the one at fault."""
    if not isinstance(document, Mapping):
        raise ConfigError("--config", "the connector config must be a JSON object")
    raw = dict(document["config"]) if isinstance(document.get("config"), Mapping) else dict(document)
    if "name" in document and "name" not in raw:
        raw["name"] = document["name"]
    _reject_not_built(raw)
    values = {k.name: _parse_value(k, raw.get(k.name)) for k in KEYS}
    passthrough = {k: str(v) for k, v in raw.items() if k.startswith(PASSTHROUGH_PREFIXES) and k not in KEYS_BY_NAME}
    unknown = tuple(sorted(k for k in raw if k not in KEYS_BY_NAME and k not in passthrough))
    config = SinkConfig(values, frozenset(k for k in raw if k in KEYS_BY_NAME), passthrough, unknown)
    _check_combinations(config)
    return config


def _reject_not_built(raw: Mapping[str, Any]) -> None:
    for key, feature in NOT_BUILT_YET.items():
        if key in raw and str(raw[key]).strip().lower() not in OFF_VALUES:
            raise ConfigError(key, f"{feature} is not built yet; remove the key or leave it at its off value")


def _parse_value(key: Key, value: Any) -> Any:
    if value is None or (isinstance(value, str) and value.strip() == "" and key.kind != "string"):
        if key.default is REQUIRED:
            raise ConfigError(key.name, "is required")
        value = key.default
        if value is None:
            return None
    try:
        parsed = _PARSERS[key.kind](key, value)
    except (TypeError, ValueError) as e:
        raise ConfigError(key.name, f"{value!r} is not a valid {key.kind}: {e}") from e
    return parsed


def _parse_int(key: Key, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a boolean is not an integer")
    number = int(str(value).strip())
    if key.minimum is not None and number < key.minimum:
        raise ValueError(f"must be at least {key.minimum}")
    if key.maximum is not None and number > key.maximum:
        raise ValueError(f"must be at most {key.maximum}")
    return number


def _parse_bool(key: Key, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError("expected true or false")
    return text == "true"


def _parse_list(key: Key, value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    parsed = tuple(str(item).strip() for item in items if str(item).strip())
    if not parsed:
        raise ValueError("the list is empty")
    return parsed


def _parse_choice(key: Key, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in key.choices:
        raise ValueError(f"expected one of {', '.join(key.choices)}")
    return text


def _parse_class(key: Key, value: Any) -> str:
    text = str(value).strip()
    for canonical, spellings in key.classes.items():
        if text in spellings or text.lower() == canonical:
            if canonical not in key.built:
                raise ValueError(f"{text} is not built yet (built: {', '.join(key.built)})")
            return canonical
    raise ValueError(f"unknown class; expected one of {', '.join(s[0] for s in key.classes.values())}")


_PARSERS = {
    "string": lambda key, value: str(value),
    "int": _parse_int,
    "bool": _parse_bool,
    "list": _parse_list,
    "choice": _parse_choice,
    "class": _parse_class,
}


def _check_combinations(config: SinkConfig) -> None:
    topics, regex = config["topics"], config["topics.regex"]
    if (topics is None) == (regex is None):
        raise ConfigError("topics", "set exactly one of topics and topics.regex")
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as e:
            raise ConfigError("topics.regex", f"not a valid regular expression: {e}") from e
    if not config["connector.class"].endswith("S3SinkConnector"):
        raise ConfigError("connector.class", f"{config['connector.class']} is not the S3 sink connector")
    check_dead_letter_settings(config)
    check_output_settings(config)
    check_converter_settings(config)
    check_partitioning_settings(config)
    check_iceberg_settings(config)
