"""Output formats: encode the values of one file into the object's bytes."""
from sink_engine.format.base import Format
from sink_engine.format.registry import format_for

__all__ = ["Format", "format_for"]
