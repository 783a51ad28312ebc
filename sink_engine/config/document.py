"""A connector file's bytes as the JSON document they hold, with a warning for each key an object sets twice (JSON
takes the last, as Kafka Connect's REST API does, so the first is silently lost: the file most likely means
something else). Errors name the file, never Python's decoder."""

from __future__ import annotations

import json
from typing import Any

from sink_engine.config.credentials import masked
from sink_engine.config.lint import ConfigWarning
from sink_engine.errors import OptionError


def read_document(data: bytes, location: str, option: str = "--config") -> tuple[Any, tuple[ConfigWarning, ...]]:
    """The JSON value of `data` and the duplicate-key warnings; OptionError naming `option` and the file when it is
    not UTF-8 JSON."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise OptionError(
            option,
            f"{location} is not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r}); "
            "JSON files are UTF-8 (RFC 8259): save it as UTF-8",
        ) from None
    warnings: list[ConfigWarning] = []
    try:
        document = json.loads(text, object_pairs_hook=lambda pairs: _object(pairs, warnings))
    except json.JSONDecodeError as e:
        raise OptionError(
            option, f"{location} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    return document, tuple(warnings)


def _object(pairs: list[tuple[str, Any]], warnings: list[ConfigWarning]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found and not isinstance(value, dict):
            warnings.append(
                ConfigWarning(
                    key,
                    f"is set twice ({_shown(key, found[key])}, then {_shown(key, value)}); the last is used, as "
                    "Kafka Connect does: remove one",
                )
            )
        found[key] = value
    return found


def _shown(key: str, value: Any) -> str:
    return json.dumps(masked(key, value))
