"""Checks of a connector map as written, before its keys are parsed: what Kafka Connect's REST API, the worker or S3
would refuse, and what they would take while it is most likely a mistake (a warning). Each names its key.

- a value that is a JSON array or object: Connect's REST API takes a connector's config as a map of strings and
  refuses the request (`"topics": ["a", "b"]`; Connect's list syntax is `"a,b"`);
- `connector.class`: required by Connect (ConnectorConfig declares it without a default): missing, a warning (the
  S3 sink is assumed); another plugin's class, an error (Connect's aliases of a class are its simple name and that
  name without `Connector`);
- a template placeholder left in a value (`<my-bucket-name>`, `<topic-1>`): an error;
- `s3.bucket.name` against S3's naming rules for general purpose buckets ("General purpose bucket naming rules",
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html): an error;
- `s3.region`: not shaped as a region (`us-east-1`), an error; a region this botocore does not know, a warning."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sink_engine.config.cloud import CLOUD_CLASS
from sink_engine.config.collector import Collector
from sink_engine.config.keys import S3_SINK_CLASS
from sink_engine.errors import ConfigError


@dataclass(frozen=True)
class ConfigWarning:
    """A key the engine takes as written while it is most likely a mistake."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


# Connect's names for the S3 sink's class: its full name, simple name, and simple name without "Connector"
SINK_CLASS_NAMES = (S3_SINK_CLASS, "S3SinkConnector", "S3Sink", CLOUD_CLASS)
_PLACEHOLDER = re.compile(r"(?<!\?)<[A-Za-z][\w .-]*>")  # not a regex's named group: (?<name>...)
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def lint(raw: Mapping[str, Any], found: Collector) -> tuple[ConfigWarning, ...]:
    """The warnings about `raw`; each error is added to `found`."""
    warnings: list[ConfigWarning] = []
    for key, value in raw.items():
        with found.check():
            _check_value(key, value)
    judged = {e.key for e in found.errors}
    with found.check():
        warnings += _connector_class(raw)
    if "s3.bucket.name" not in judged:
        with found.check():
            _bucket_name(raw.get("s3.bucket.name"))
    if "s3.region" not in judged:
        with found.check():
            warnings += _region(raw.get("s3.region"))
    return tuple(warnings)


def _check_value(key: str, value: Any) -> None:
    if isinstance(value, (list, dict)):
        kind = "array" if isinstance(value, list) else "object"
        hint = f' (a list is one string: "{",".join(map(str, value))}")' if isinstance(value, list) else ""
        raise ConfigError(key, f"is a JSON {kind}; Kafka Connect takes every value as a string{hint}")
    if isinstance(value, str) and (match := _PLACEHOLDER.search(value)):
        raise ConfigError(key, f"{match.group()} is a placeholder from a template; write the value it stands for")


def _connector_class(raw: Mapping[str, Any]) -> list[ConfigWarning]:
    value = str(raw.get("connector.class") or "").strip()
    if not value:
        return [ConfigWarning("connector.class", f"is not set (Kafka Connect requires it); taken as {S3_SINK_CLASS}")]
    if value not in SINK_CLASS_NAMES:
        raise ConfigError(
            "connector.class",
            f"{value} is not the S3 sink connector ({S3_SINK_CLASS}, or {CLOUD_CLASS} for Confluent Cloud's); "
            "this engine runs only that connector's configs",
        )
    return []


def _bucket_name(value: Any) -> None:
    if value is None or str(value).strip() == "":
        return  # required: the key's own check says so
    name = str(value)
    problem = bucket_name_problem(name)
    if problem:
        raise ConfigError("s3.bucket.name", f"{name!r} is not a valid S3 bucket name: {problem}")


def bucket_name_problem(name: str) -> str | None:
    """Why S3 refuses `name` for a general purpose bucket, or None."""
    if not 3 <= len(name) <= 63:
        return f"it has {len(name)} characters; S3 takes 3 to 63"
    if not _BUCKET.fullmatch(name):
        return "S3 takes lowercase letters, digits, '.' and '-', beginning and ending with a letter or digit"
    if ".." in name:
        return "two adjacent periods"
    if _is_ip_address(name):
        return "it is formatted as an IP address"
    reserved = [p for p in _RESERVED_PREFIXES if name.startswith(p)] + [
        s for s in _RESERVED_SUFFIXES if name.endswith(s)
    ]
    return f"{reserved[0]!r} is reserved by S3" if reserved else None


def _is_ip_address(name: str) -> bool:
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        return False
    return True


def _region(value: Any) -> list[ConfigWarning]:
    if value is None or str(value).strip() == "":
        return []
    region = str(value).strip()
    if not _REGION.fullmatch(region):
        raise ConfigError("s3.region", f"{region!r} is not an AWS Region code (such as us-east-1 or eu-west-2)")
    if region not in _known_regions():
        return [ConfigWarning("s3.region", f"{region!r} is a Region this AWS SDK (botocore) does not know")]
    return []


@lru_cache(maxsize=1)
def _known_regions() -> frozenset[str]:
    import botocore.session

    session = botocore.session.get_session()
    return frozenset(
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("s3", partition)
    )
