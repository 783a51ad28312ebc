"""A field path as Kafka's `field.syntax.version` defines it (KIP-821, Kafka 3.8+): `V1` (the default) names one
top-level field, the text as it is; `V2` is dotted (`a.b.c`), a step holding dots wrapped in backticks
(`` `a.b`.c ``), a backtick inside a wrapped step escaped with a backslash (`` \\` ``). Of the SMTs here only
ExtractField takes it, as in Kafka.

`value_in` and `field_in` follow Kafka's SingleFieldPath: a missing step gives None; a step through a value that
is not a map (schemaless) or struct is a TransformError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.schemas import field_value

SYNTAX_KEY = "field.syntax.version"


@dataclass(frozen=True)
class FieldPath:
    text: str
    steps: tuple[str, ...]

    @classmethod
    def from_options(cls, options: TransformOptions, name: str) -> FieldPath:
        """The path in option `name`, read with the alias's `field.syntax.version`."""
        text = options.string(name)
        version = options.choice(SYNTAX_KEY, ("V1", "V2"), "V1")
        if version == "V1":
            return cls(text, (text,))
        try:
            return cls(text, split_v2(text))
        except ValueError as error:
            raise ConfigError(options.key(name), str(error)) from None

    def field_in(self, schema: Schema) -> Field | None:
        """The field the path names in a struct schema, None when a step is missing."""
        current = schema
        for step in self.steps[:-1]:
            found = current.field(step) if current.type == "struct" else None
            if found is None:
                return None
            current = found.schema
        return current.field(self.steps[-1]) if current.type == "struct" else None

    def value_in(self, value: dict, schema: Schema | None, with_default: bool = True) -> Any:
        """The value at the path in a map (schema None) or a struct of `schema`; intermediate struct fields read
        with their defaults, the last one as `with_default` says."""
        current: Any = value
        current_schema = schema
        for step in self.steps[:-1]:
            if current_schema is None:
                current = current.get(step)
            else:
                found = current_schema.field(step)
                if found is None:
                    return None
                current, current_schema = field_value(current, found), found.schema
            if current is None:
                return None
            if not isinstance(current, dict) or (current_schema is not None and current_schema.type != "struct"):
                raise TransformError(
                    f"nested field access of {self.text!r}: step {step!r} is not a "
                    f"{'map' if current_schema is None else 'struct'}"
                )
        if current_schema is None:
            return current.get(self.steps[-1])
        last = current_schema.field(self.steps[-1])
        return None if last is None else field_value(current, last, with_default)


def split_v2(path: str) -> tuple[str, ...]:
    """The steps of a V2 path (Kafka's SingleFieldPath parsing); ValueError on an unclosed backtick."""
    steps: list[str] = []
    index = 0
    while 0 <= index < len(path):
        if path[index] != "`":
            dot = path.find(".", index)
            steps.append(path[index:] if dot < 0 else path[index:dot])
            index = dot + 1 if dot >= 0 else len(path)
            continue
        index = _wrapped_step(path, index, steps)
    if path.endswith("."):
        steps.append("")
    return tuple(steps)


def _wrapped_step(path: str, opening: int, steps: list[str]) -> int:
    """Reads the backtick-wrapped step opening at `opening` into `steps`; the index after it."""
    index = start = opening + 1
    parts: list[str] = []
    while True:
        index = path.find("`", index)
        if index < 0:
            raise _unclosed(path, opening)
        escaped = path[index - 1] == "\\"
        if index >= len(path) - 1:
            if escaped:
                raise _unclosed(path, opening)
            steps.append("".join(parts) + path[start:index])
            return index + 1
        if path[index + 1] != ".":
            index += 1
            continue
        if escaped:
            parts.append(path[start : index - 1] + "`")
            index += 1
            start = index
            continue
        steps.append("".join(parts) + path[start:index])
        return index + 2


def _unclosed(path: str, at: int) -> ValueError:
    return ValueError(
        f"incomplete backtick pair in path {path!r}: escape the backtick at position {at} with a backslash"
    )
