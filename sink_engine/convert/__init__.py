"""Value converters: raw Kafka bytes to typed values, named like Kafka Connect's converters.

`converter_for` is imported on first use: the registry imports every converter (fastavro, the Schema Registry
client), which config parsing, and so the DLQ replay Lambda, must not need."""

from collections.abc import Callable

from sink_engine.convert.base import Converter
from sink_engine.convert.settings import ConverterSettings

__all__ = ["Converter", "ConverterSettings", "converter_for"]


def __getattr__(name: str) -> Callable[..., Converter]:
    if name == "converter_for":
        from sink_engine.convert.registry import converter_for  # imports pyarrow

        return converter_for
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
