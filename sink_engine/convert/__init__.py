"""Value converters: raw Kafka bytes to typed values, named like Kafka Connect's converters."""
from sink_engine.convert.base import Converter, ValueColumn
from sink_engine.convert.registry import converter_for

__all__ = ["Converter", "ValueColumn", "converter_for"]
