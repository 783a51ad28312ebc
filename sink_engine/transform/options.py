"""The options of one transform or predicate alias, with typed getters whose errors name the full config key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sink_engine.errors import ConfigError

_MISSING = object()


@dataclass(frozen=True)
class TransformOptions:
    """`prefix` is `transforms.<alias>.` or `predicates.<alias>.`; `values` the keys under it, prefix removed
    (`type` included); `role` "key" or "value" for a `$Key` / `$Value` class, None for a class without them."""

    prefix: str
    values: Mapping[str, Any]
    role: str | None = None

    def key(self, name: str) -> str:
        """The full config key of option `name`, for errors."""
        return f"{self.prefix}{name}"

    def string(self, name: str, default: Any = _MISSING) -> Any:
        """The option as text (stripped); `default` when unset or empty; ConfigError when required and unset."""
        value = self.values.get(name)
        if value is None or (isinstance(value, str) and value.strip() == ""):
            if default is _MISSING:
                raise ConfigError(self.key(name), "is required")
            return default
        return value.strip() if isinstance(value, str) else str(value)

    def strings(self, name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        """A comma-separated list option (Connect's LIST type), items stripped, empty items dropped."""
        value = self.values.get(name)
        if value is None:
            return default
        items = value if isinstance(value, list) else str(value).split(",")
        return tuple(str(item).strip() for item in items if str(item).strip())

    def boolean(self, name: str, default: bool) -> bool:
        value = self.values.get(name)
        if value is None or str(value).strip() == "":
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise ConfigError(self.key(name), f"{value!r} is not a boolean (true or false)")
        return text == "true"

    def integer(self, name: str, default: Any = _MISSING) -> Any:
        value = self.values.get(name)
        if value is None or str(value).strip() == "":
            if default is _MISSING:
                raise ConfigError(self.key(name), "is required")
            return default
        try:
            return int(str(value).strip())
        except ValueError:
            raise ConfigError(self.key(name), f"{value!r} is not an integer") from None

    def choice(self, name: str, choices: tuple[str, ...], default: Any = _MISSING) -> Any:
        """One of `choices`, compared case-insensitively; returned as spelled in `choices`."""
        text = self.string(name, default)
        if text is default and default is not _MISSING:
            return default
        for candidate in choices:
            if candidate.lower() == str(text).lower():
                return candidate
        raise ConfigError(self.key(name), f"{text!r} is not one of {', '.join(choices)}")
