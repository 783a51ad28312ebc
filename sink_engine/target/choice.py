"""The one place that chooses what a connector writes to (its target) from its config: the first entry of `TARGETS`
that selects the config. A new target is a class (target/contract.py) and an entry here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.format.settings import FormatSettings
from sink_engine.target.contract import Target
from sink_engine.target.iceberg_tables.target import IcebergTablesTarget
from sink_engine.target.s3_objects.target import S3ObjectsTarget


@dataclass(frozen=True)
class Choice:
    target: type[Target]
    selects: Callable[[SinkConfig], bool]
    described: str  # how a config chooses it, as errors name it


TARGETS: tuple[Choice, ...] = (
    Choice(
        IcebergTablesTarget,
        lambda config: FormatSettings.from_config(config).format_class == "iceberg",
        "format.class=IcebergFormat",
    ),
    Choice(S3ObjectsTarget, lambda config: True, "another format.class"),  # the default
)


def target_for(config: SinkConfig) -> Target:
    """The target of the first entry of `TARGETS` that selects the config."""
    return next(choice.target for choice in TARGETS if choice.selects(config))(config)


def check_keys(config: SinkConfig, target: Target) -> None:
    """ConfigError naming the first key set (in key order) that only another target reads (`key_prefixes`)."""
    for key in sorted((*config.explicit, *config.passthrough)):
        if key.startswith(target.key_prefixes):
            continue
        owner = next((choice for choice in TARGETS if key.startswith(choice.target.key_prefixes)), None)
        if owner is not None:
            raise ConfigError(key, f"is only used with {owner.described}")
