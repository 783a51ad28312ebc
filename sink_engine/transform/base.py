"""The transform seam: single message transforms (SMTs) and their predicates, as Kafka Connect defines them.

A transform class is built once per task from its own options (the `transforms.<alias>.*` keys without that
prefix) and then called once per record, in offset order. Contract, as in Connect:
- `apply` returns the transformed record, or None to drop it (a dropped record is settled like an ignored
  tombstone: the commit point moves past it).
- It is deterministic: the same record and options give the same result (reruns write the same bytes); any
  cache is keyed by what it caches (a schema), never by time or call order.
- A record it cannot transform raises `TransformError` (sink_engine.transform.errors) with the reason; the chain
  names the record's topic, partition and offset and the transform's alias.
- A bad option raises `ConfigError` naming the full key (`transforms.<alias>.<option>`): use `options.key(name)`.
"""

from __future__ import annotations

from typing import Protocol

from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord


class Transform(Protocol):
    @classmethod
    def from_options(cls, options: TransformOptions) -> Transform:
        """Build from the alias's options; ConfigError names the key at fault."""

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        """The transformed record, or None to drop it; TransformError when it cannot be transformed."""


class Predicate(Protocol):
    @classmethod
    def from_options(cls, options: TransformOptions) -> Predicate:
        """Build from the predicate's options (`predicates.<alias>.*`)."""

    def test(self, record: TransformRecord) -> bool:
        """Whether the record matches."""
