"""The chain: a task's transforms applied to one record in the order `transforms` lists them."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.errors import TransformationError
from sink_engine.transform.base import Predicate, Transform
from sink_engine.transform.errors import TransformError
from sink_engine.transform.record import TransformRecord


@dataclass(frozen=True)
class ChainStep:
    alias: str
    transform: Transform
    predicate: Predicate | None = None
    negate: bool = False

    def applies_to(self, record: TransformRecord) -> bool:
        """As Connect's TransformationStage: always without a predicate, else when test(record) != negate."""
        return self.predicate is None or self.predicate.test(record) != self.negate


@dataclass(frozen=True)
class TransformChain:
    steps: tuple[ChainStep, ...]
    needs_keys: bool = False  # a transform reads or writes keys: they are converted with key.converter first
    has_routers: bool = False  # a transform may change the topic

    def __bool__(self) -> bool:
        return bool(self.steps)

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        """The record after every step, or None when a step dropped it (later steps do not see it). A step's
        TransformError is a TransformationError naming the record (where it was read), the alias and the reason;
        its `executing_class` is the transform's class."""
        for step in self.steps:
            if not step.applies_to(record):
                continue
            try:
                result = step.transform.apply(record)
            except TransformError as e:
                error = TransformationError(
                    record.source_topic or record.topic,
                    record.partition,
                    record.offset,
                    f"transform {step.alias!r} failed: {e.reason}",
                )
                cls = type(step.transform)
                error.executing_class = f"{cls.__module__}.{cls.__qualname__}"
                raise error from e
            if result is None:
                return None
            record = result
        return record
