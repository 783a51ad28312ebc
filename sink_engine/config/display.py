"""What `sink-engine validate` prints: a config's keys with their effective values in Kafka Connect's notation
(`null`, `true`/`false`, lists comma-separated, classes by their Confluent class name), credentials masked."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sink_engine.config import SinkConfig
from sink_engine.config.credentials import masked
from sink_engine.config.key_policy import why_unused
from sink_engine.config.keys import KEYS_BY_NAME


def shown(key: str, value: Any) -> str:
    """`value` of `key` as a Connect properties file would hold it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    spec = KEYS_BY_NAME.get(key)
    if spec is not None and spec.kind == "class" and value in spec.classes:
        return spec.classes[value][0]
    return str(masked(key, value))


def validation_report(
    config: SinkConfig, transforms: Iterable[str], show_all: bool, target: Iterable[str] = ()
) -> list[str]:
    """The lines of `validate`'s report; `target`: what the target makes of the config (Target.describe)."""
    rows = [(k, v, origin) for k, v, origin in config.effective() if show_all or origin != "default"]
    defaults = sum(1 for *_, origin in config.effective() if origin == "default")
    width = max(
        [len(key) for key, _, _ in rows] + [len(k) for k in config.unknown] + [len(i.key) for i in config.ignored]
    )
    lines = [
        f"connector {config.name}: {_set_count(config)} keys set, {len(config.derived)} "
        f"implied, {defaults} at their defaults" + ("" if show_all else " (--all lists them)")
    ]
    lines += [f"{key:<{width}}  {shown(key, value)}{_origin(origin)}" for key, value, origin in rows]
    lines += [f"{key:<{width}}  (accepted, no effect here: {why_unused(key)})" for key in config.unknown]
    if config.ignored:
        lines.append(f"ignored keys ({len(config.ignored)}):")
        lines += [f"{ignored.key:<{width}}  (ignored: {ignored.describe()})" for ignored in config.ignored]
    if config.warnings:
        lines.append(f"warnings ({len(config.warnings)}):")
        lines += [f"  {warning}" for warning in config.warnings]
    chain = list(transforms)
    if chain:
        lines.append("transforms, in order:")
        lines += [f"  {line}" for line in chain]
    lines += list(target)
    unused = config.worker.unused()
    if unused:
        lines.append(f"worker settings with no effect here ({len(unused)}): {', '.join(unused)}")
    return lines


def _set_count(config: SinkConfig) -> int:
    return len(config.explicit) + len(config.passthrough) + len(config.unknown) + len(config.ignored)


def _origin(origin: str) -> str:
    return "" if origin == "set" else f"  ({origin})"
