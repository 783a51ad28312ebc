"""Checks of the converter settings that span several keys (`value.converter.*`, `key.converter.*`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sink_engine.config.keys import CONVERTER_CLASSES, REGISTRY_CONVERTERS
from sink_engine.errors import ConfigError

if TYPE_CHECKING:
    from sink_engine.config import SinkConfig


def check_converter_settings(config: SinkConfig) -> None:
    """The Schema Registry converters (Avro, Protobuf, JSON Schema) need their registry URL, and USER_INFO
    credentials need the user info."""
    for role in ("value", "key"):
        prefix = f"{role}.converter"
        if config.text(prefix) not in REGISTRY_CONVERTERS:
            continue
        if not config[f"{prefix}.schema.registry.url"]:
            raise ConfigError(
                f"{prefix}.schema.registry.url", f"is required with the {CONVERTER_CLASSES[config.text(prefix)][1]}"
            )
        user_info = config.optional_text(f"{prefix}.basic.auth.user.info")
        if config[f"{prefix}.basic.auth.credentials.source"] == "user_info" and ":" not in (user_info or ""):
            raise ConfigError(
                f"{prefix}.basic.auth.user.info", "must be user:password with basic.auth.credentials.source=USER_INFO"
            )
