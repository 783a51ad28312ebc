"""Errors of the transform seam."""

from __future__ import annotations


class TransformError(Exception):
    """A transform could not transform one record; the chain turns it into a RecordError naming the record and
    the transform's alias (so that errors.tolerance and the dead-letter queue treat it as a bad record)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)
