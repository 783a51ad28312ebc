"""Kafka Connect's Filter: drops every record it applies to (with a predicate, the records the predicate selects)."""

from __future__ import annotations

from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord


class Filter:
    @classmethod
    def from_options(cls, options: TransformOptions) -> Filter:
        return cls()

    def apply(self, record: TransformRecord) -> None:
        return None
