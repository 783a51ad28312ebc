"""Confluent's TombstoneHandler: what to do with a tombstone (a null value, with or without a value schema).

`behavior`: `warn` (the default) drops it and logs a TOMBSTONE_IGNORED event at WARNING; `ignore` drops it and
logs the event at DEBUG; `fail` makes it a bad record (a TransformError; the chain names the record, and
`errors.tolerance` decides). Other records pass unchanged.
"""

from __future__ import annotations

import logging

from sink_engine import events
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord

TOMBSTONE_IGNORED = "TOMBSTONE_IGNORED"
_LEVELS = {"ignore": logging.DEBUG, "warn": logging.WARNING}


class TombstoneHandler:
    def __init__(self, behavior: str):
        self.behavior = behavior

    @classmethod
    def from_options(cls, options: TransformOptions) -> TombstoneHandler:
        return cls(options.choice("behavior", ("ignore", "warn", "fail"), "warn"))

    def apply(self, record: TransformRecord) -> TransformRecord | None:
        if record.value is not None:
            return record
        if self.behavior == "fail":
            raise TransformError("tombstone record (null value) with TombstoneHandler behavior fail")
        events.emit(
            TOMBSTONE_IGNORED,
            _LEVELS[self.behavior],
            topic=record.topic,
            partition=record.partition,
            offset=record.offset,
        )
        return None
