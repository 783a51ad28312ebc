"""The Schema Registry of a Confluent Cloud config: Cloud finds its own, so the file names none.

With `input.data.format` (or `input.key.format`) AVRO, PROTOBUF or JSON_SR and no
`<role>.converter.schema.registry.url` in the file, the registry is a `RegistryDefault` its caller gives:
- the CLI: the environment variables SINK_SCHEMA_REGISTRY_URL and, for basic auth, SINK_SCHEMA_REGISTRY_USER_INFO
  (`user:password`, the converters' USER_INFO credentials; taken as written, without `${secrets:...}` resolution);
- a deployed connector: the environment settings' `schema_registry` block (infra/settings.py), which synthesis
  writes into the published connector file (infra/connectors.py).
Both apply to the value and the key converter alike, and never to a file that names a registry URL itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sink_engine.errors import ConfigError

URL_VARIABLE = "SINK_SCHEMA_REGISTRY_URL"
USER_INFO_VARIABLE = "SINK_SCHEMA_REGISTRY_USER_INFO"
SCHEMA_FORMATS = ("AVRO", "JSON_SR", "PROTOBUF")  # input formats read through a Schema Registry
_ROLES = (("input.data.format", "value"), ("input.key.format", "key"))


@dataclass(frozen=True)
class RegistryDefault:
    """A registry URL and optional `user:password`, with where each came from (what `validate` shows)."""

    url: str
    user_info: str | None = None
    url_origin: str = URL_VARIABLE
    user_info_origin: str = USER_INFO_VARIABLE

    def keys(self, role: str) -> dict[str, tuple[str, str]]:
        """The `<role>.converter.*` keys this registry sets: key -> (value, origin)."""
        prefix = f"{role}.converter."
        keys = {f"{prefix}schema.registry.url": (self.url, self.url_origin)}
        if self.user_info:
            keys[f"{prefix}basic.auth.credentials.source"] = ("USER_INFO", self.user_info_origin)
            keys[f"{prefix}basic.auth.user.info"] = (self.user_info, self.user_info_origin)
        return keys


def from_environment(environ: Mapping[str, str]) -> RegistryDefault | None:
    """The CLI's registry: SINK_SCHEMA_REGISTRY_URL (None when unset or empty) and SINK_SCHEMA_REGISTRY_USER_INFO."""
    url = environ.get(URL_VARIABLE, "").strip()
    user_info = environ.get(USER_INFO_VARIABLE, "").strip() or None
    if not url:
        return None
    if user_info is not None and ":" not in user_info:
        raise ConfigError(USER_INFO_VARIABLE, "must be user:password (the registry's basic-auth credentials)")
    return RegistryDefault(url, user_info)


def registry_keys(raw: Mapping[str, Any], registry: RegistryDefault | None) -> dict[str, tuple[str, str]]:
    """The keys a Cloud config `raw` (connector.class S3_SINK) takes from `registry`: key -> (value, origin);
    ConfigError naming the input format when a schema'd input needs a registry and neither names one."""
    keys = {}
    for source, role in _ROLES:
        value = str(raw.get(source) or "").strip().upper()
        if value not in SCHEMA_FORMATS or str(raw.get(f"{role}.converter.schema.registry.url") or "").strip():
            continue
        if registry is None:
            raise ConfigError(
                source,
                f"{value} is read through a Confluent Schema Registry, which a Confluent Cloud "
                f"config does not name: set {role}.converter.schema.registry.url in the file, "
                f"or {URL_VARIABLE} for the CLI, or schema_registry.url in the environment's "
                "settings (infra/environments/<env>.json) for a deployed connector",
            )
        keys.update(registry.keys(role))
    return keys
