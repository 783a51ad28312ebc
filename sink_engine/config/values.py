"""One key's value as written (a JSON string, number or boolean) into its typed value, by the key's kind (int,
bool, list, choice, class, string), with its default when unset; errors name the key and say what was expected."""

from __future__ import annotations

import json
import re
from typing import Any

from sink_engine.config.keys import JAVA_LONG_MAX, REQUIRED, Key
from sink_engine.errors import ConfigError


def parse_value(key: Key, value: Any) -> Any:
    """The typed value of `key` (its default when unset); ConfigError naming the key, in words."""
    if value is None or (isinstance(value, str) and value.strip() == "" and key.kind != "string"):
        if key.default is REQUIRED:
            raise ConfigError(key.name, "is required")
        value = key.default
        if value is None or value == ():
            return value
    try:
        parsed = _PARSERS[key.kind](key, value)
    except (TypeError, ValueError) as e:
        raise ConfigError(key.name, f"{json.dumps(value)}: {e}") from None
    return parsed


def _parse_int(key: Key, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a whole number, not true or false")
    text = str(value).strip()
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError("expected a whole number")
    number = int(text)
    if key.minimum is not None and number < key.minimum:
        raise ValueError(f"must be at least {key.minimum}")
    maximum = JAVA_LONG_MAX if key.maximum is None else key.maximum
    if number > maximum:
        raise ValueError(f"must be at most {maximum}")
    return number


def _parse_bool(key: Key, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError("expected true or false")
    return text == "true"


def parse_list(key: Key, value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    parsed = tuple(str(item).strip() for item in items if str(item).strip())
    if not parsed:
        raise ValueError("expected a comma-separated list, found nothing")
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
    raise ValueError(f"not a class this engine knows; expected one of {', '.join(s[0] for s in key.classes.values())}")


_PARSERS = {
    "string": lambda key, value: str(value),
    "int": _parse_int,
    "bool": _parse_bool,
    "list": parse_list,
    "choice": _parse_choice,
    "class": _parse_class,
}
