"""What the Rust readers of the columnar paths share (polars' Avro reader, ptars): an optional import, and a call
whose failure, a Rust panic included, means "take the general path"."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")


def import_optional(name: str) -> ModuleType | None:
    """The module, or None when it is not installed (every batch then takes the general path)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def or_none(call: Callable[..., T], *args: object) -> T | None:
    """`call(*args)`, or None when it raises: an error, or a Rust panic, which pyo3 raises as PanicException, a
    BaseException. KeyboardInterrupt and SystemExit go on."""
    try:
        return call(*args)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001 - see the docstring
        return None
