"""The one place that chooses what a connector writes to (its target) from its config: the first entry of `TARGETS`
that selects the config. A new target is a class (target/contract.py) and an entry here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.format.settings import FormatSettings
from sink_engine.target.contract import ContinuousTarget, Target, VerifiedTarget
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


def continuous_target_for(config: SinkConfig) -> ContinuousTarget:
    """The connector's target for a continuous run: ConfigError naming the key when its capabilities say a
    continuous run cannot write it."""
    target = target_for(config)
    target.capabilities.continuous.require()
    assert isinstance(target, ContinuousTarget)  # the capability is declared by the interface's implementations
    return target


def verified_target_for(config: SinkConfig) -> VerifiedTarget:
    """The connector's target for `sink-engine verify`: ConfigError naming the key when its capabilities say verify
    cannot check it."""
    target = target_for(config)
    target.capabilities.verify.require()
    assert isinstance(target, VerifiedTarget)  # the capability is declared by the interface's implementations
    return target


def check_keys(config: SinkConfig, target: Target) -> None:
    """ConfigError naming the first key set (in key order) that only another target reads (`key_prefixes`)."""
    for key in sorted((*config.explicit, *config.passthrough)):
        if key.startswith(target.capabilities.key_prefixes):
            continue
        owner = next((choice for choice in TARGETS if key.startswith(choice.target.CAPABILITIES.key_prefixes)), None)
        if owner is not None:
            raise ConfigError(key, f"is only used with {owner.described}")
