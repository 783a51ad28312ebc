"""One role's converter keys (`<role>.converter` and its `<role>.converter.*` keys), read once from the config:
what `converter_for` builds a converter from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sink_engine.config import SinkConfig
from sink_engine.config.keys import KEYS


@dataclass(frozen=True)
class ConverterSettings:
    role: str  # value or key
    name: str  # `<role>.converter`, canonical (config.keys.CONVERTER_CLASSES)
    options: Mapping[str, Any]  # the `<role>.converter.*` keys without the prefix
    keep_documents: bool  # schemaless JSON: keep the parsed values, which partitioning or rotation reads

    @classmethod
    def from_config(cls, config: SinkConfig, role: str = "value") -> ConverterSettings:
        prefix = f"{role}.converter."
        options = {k.name[len(prefix) :]: config[k.name] for k in KEYS if k.name.startswith(prefix)}
        return cls(role, config.text(f"{role}.converter"), options, role == "value" and reads_value_fields(config))


def reads_value_fields(config: SinkConfig) -> bool:
    """Whether partitioning or rotation reads fields of the values (a field partitioner, or record times from
    `timestamp.field`), so that parsed values are worth keeping (`ValueColumn.documents()`)."""
    return config["partitioner.class"] in ("field", "fieldtime") or config["timestamp.extractor"] == "recordfield"
