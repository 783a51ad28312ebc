"""`transforms` / `predicates`: the chain of single message transforms a task applies, read once from the config.

Connect's syntax: `transforms=a,b` lists aliases in order; `transforms.<alias>.type` names the class (registry.py)
and the other `transforms.<alias>.*` keys are its options; `transforms.<alias>.predicate` names an alias of
`predicates`, whose `predicates.<alias>.type` and options are read the same way; `transforms.<alias>.negate=true`
applies the transform where the predicate does not match. Options a class does not read are ignored, as in
Connect. The settings hold only text (they travel to Spark tasks); `build` makes the classes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from sink_engine.config import SinkConfig
from sink_engine.convert.settings import ConverterSettings
from sink_engine.errors import ConfigError
from sink_engine.transform.chain import ChainStep, TransformChain
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.registry import TRANSFORMS, predicate_class, transform_class

TRANSFORMS_PREFIX, PREDICATES_PREFIX = "transforms.", "predicates."
_STEP_KEYS = ("predicate", "negate")  # the chain's, not passed to the transform (Connect removes them too)
ROUTERS = frozenset(name for name, (module, _, _) in TRANSFORMS.items() if module == "routers")
_KEY_WRITERS = frozenset(name for name, (module, _, _) in TRANSFORMS.items() if module == "value_to_key")


@dataclass(frozen=True)
class TransformSpec:
    alias: str
    type: str
    options: Mapping[str, str]  # every `transforms.<alias>.*` key, prefix removed (type included)
    predicate: str | None  # an alias of `predicates`
    negate: bool


@dataclass(frozen=True)
class TransformSettings:
    transforms: tuple[TransformSpec, ...]
    predicates: Mapping[str, tuple[str, Mapping[str, str]]]  # alias -> (type, options)
    key_converter: ConverterSettings | None  # key.converter, when a transform reads or writes keys

    @classmethod
    def from_config(cls, config: SinkConfig) -> TransformSettings:
        """ConfigError naming the key: an alias listed twice or without a type, a predicate not declared, `negate`
        without a predicate (as Connect refuses it)."""
        predicates = {alias: _typed(config, PREDICATES_PREFIX, alias) for alias in _aliases(config, "predicates")}
        specs = []
        for alias in _aliases(config, "transforms"):
            type_name, options = _typed(config, TRANSFORMS_PREFIX, alias)
            predicate = (options.get("predicate") or "").strip() or None
            if predicate is not None and predicate not in predicates:
                raise ConfigError(
                    f"{TRANSFORMS_PREFIX}{alias}.predicate", f"{predicate!r} is not an alias listed in predicates"
                )
            negate = TransformOptions(f"{TRANSFORMS_PREFIX}{alias}.", options).boolean("negate", False)
            if "negate" in options and predicate is None:
                raise ConfigError(
                    f"{TRANSFORMS_PREFIX}{alias}.negate",
                    f"is set but {TRANSFORMS_PREFIX}{alias}.predicate names no predicate to negate",
                )
            specs.append(TransformSpec(alias, type_name, options, predicate, negate))
        needs_keys = any(
            TRANSFORMS.get(s.type, (None, None, None))[2] == "key" or s.type in _KEY_WRITERS for s in specs
        )
        return cls(tuple(specs), predicates, ConverterSettings.from_config(config, "key") if needs_keys else None)

    def __bool__(self) -> bool:
        return bool(self.transforms)

    @property
    def routers(self) -> tuple[TransformSpec, ...]:
        return tuple(spec for spec in self.transforms if spec.type in ROUTERS)

    @property
    def record_routers(self) -> tuple[TransformSpec, ...]:
        """The routers that may route records of one topic apart (TimestampRouter, any router behind a predicate):
        every router but a RegexRouter without a predicate."""
        return tuple(
            spec for spec in self.routers if spec.predicate is not None or not spec.type.endswith(".RegexRouter")
        )

    def topic_router(self) -> Callable[[str], str] | None:
        """The topic the records of a topic are written under (the identity without routers), when every router
        routes all records of a topic alike; None when one routes by record (`record_routers`), so that the
        names cannot be known before the records."""
        if self.record_routers:
            return None
        routers = [step.transform for step in self.build().steps if hasattr(step.transform, "route")]

        def route(topic: str) -> str:
            for router in routers:
                topic = router.route(topic)
            return topic

        return route

    def required_topic_router(self, why: str) -> Callable[[str], str]:
        """`topic_router()`; when a router routes by record, a ConfigError naming the first such router's
        predicate (or its type, without one), with `why`."""
        route = self.topic_router()
        if route is None:
            spec = self.record_routers[0]
            raise ConfigError(
                f"transforms.{spec.alias}.type" if spec.predicate is None else f"transforms.{spec.alias}.predicate", why
            )
        return route

    def build(self) -> TransformChain:
        """The chain of built transforms; ConfigError naming the key of a bad type or option."""
        built = {}
        for alias, (type_name, options) in self.predicates.items():
            predicate_cls, role = predicate_class(type_name, f"{PREDICATES_PREFIX}{alias}.type")
            built[alias] = predicate_cls.from_options(TransformOptions(f"{PREDICATES_PREFIX}{alias}.", options, role))
        steps = []
        for spec in self.transforms:
            cls, role = transform_class(spec.type, f"{TRANSFORMS_PREFIX}{spec.alias}.type")
            options = {k: v for k, v in spec.options.items() if k not in _STEP_KEYS}
            transform = cls.from_options(TransformOptions(f"{TRANSFORMS_PREFIX}{spec.alias}.", options, role))
            predicate = built.get(spec.predicate) if spec.predicate is not None else None
            steps.append(ChainStep(spec.alias, transform, predicate, spec.negate))
        return TransformChain(tuple(steps), self.key_converter is not None, bool(self.routers))

    def describe(self) -> list[str]:
        """One line per transform, in order, for `validate`."""
        lines = []
        for spec in self.transforms:
            line = f"{spec.alias}: {spec.type}"
            if spec.predicate:
                kind = self.predicates[spec.predicate][0]
                line += f" {'unless' if spec.negate else 'if'} {spec.predicate} ({kind})"
            lines.append(line)
        return lines


def _aliases(config: SinkConfig, key: Literal["transforms", "predicates"]) -> tuple[str, ...]:
    aliases = config[key] or ()
    for position, alias in enumerate(aliases):
        if alias in aliases[:position]:
            raise ConfigError(key, f"alias {alias!r} is listed twice")
    return aliases


def _typed(config: SinkConfig, prefix: str, alias: str) -> tuple[str, dict[str, str]]:
    """(type, options) of an alias; ConfigError naming `<prefix><alias>.type` when it has none."""
    head = f"{prefix}{alias}."
    options = {k[len(head) :]: v for k, v in config.passthrough.items() if k.startswith(head)}
    type_name = (options.get("type") or "").strip()
    if not type_name:
        raise ConfigError(f"{head}type", f"is required: the class of the alias listed in {prefix.rstrip('.')}")
    return type_name, options
