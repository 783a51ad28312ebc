"""The format seam."""
from __future__ import annotations

from typing import Protocol

from sink_engine.convert.base import ValueColumn


class Format(Protocol):
    extension: str  # with the leading dot, e.g. ".json.gz"

    def encode(self, values: ValueColumn) -> bytes:
        """The whole object for these values, in order. Same values, same bytes (reruns overwrite identically)."""
