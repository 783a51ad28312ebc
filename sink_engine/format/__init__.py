"""Output formats: encode the values of one file into the object's bytes.

`format_for` is imported on first use: the registry imports every format (pyarrow, fastavro), which config
parsing, and so the DLQ replay Lambda, must not need."""

from collections.abc import Callable

from sink_engine.format.base import Format
from sink_engine.format.settings import FormatSettings

__all__ = ["Format", "FormatSettings", "format_for"]


def __getattr__(name: str) -> Callable[..., Format]:
    if name == "format_for":
        from sink_engine.format.registry import format_for  # imports pyarrow

        return format_for
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
