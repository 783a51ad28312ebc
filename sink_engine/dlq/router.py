"""`DeadLetterRouter`: what a task does with a bad record, by `errors.tolerance`.

`none`: the record is logged (with `errors.log.enable`) and the task stops on it. `all`: the router keeps
the range's dead letters in offset order until the task knows its commit point, then streams those before it
to the destination (the next run re-reads the others) and counts them by error class. The letters kept are
bounded in memory: past a size they wait in a temporary file (dlq/spool.py, which says why none is sent
earlier). With `all` and no destination the records are skipped, counted and logged, as Kafka Connect does.
"""

from __future__ import annotations

import logging
import traceback
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from sink_engine import events
from sink_engine.dlq.letter import DeadLetter, b64
from sink_engine.dlq.s3_destination import S3Destination
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.dlq.spool import MEMORY_BYTES, LetterSpool
from sink_engine.dlq.topic_destination import TopicDestination
from sink_engine.errors import RecordError
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk
from sink_engine.storage.uploader import Uploader


class Destination(Protocol):
    scan_from: int | None  # a position to store with the commit (topic destination), else None

    def write(self, letters: Iterable[DeadLetter]) -> None:
        """Write these dead letters (all before the commit point, offset order, at least one; iterated once, as
        they are read back from a spool) durably and at most once per source record across reruns. Raises
        SinkError (not a RecordError); nothing is committed then."""


class DeadLetterRouter:
    def __init__(self, settings: DeadLetterSettings, destination: Destination | None, memory_bytes: int = MEMORY_BYTES):
        """`memory_bytes`: about how much of the letters kept stays in memory (dlq/spool.py)."""
        self.tolerates = settings.tolerates
        self._connector, self._destination = settings.connector, destination
        self._log, self._log_messages = settings.log, settings.log_messages
        self._letters = LetterSpool(memory_bytes)

    def report(self, chunk: RecordChunk, position: int, error: RecordError, stage: str, executing_class: str) -> None:
        """Take the bad record at `position` of `chunk`, which the step named `executing_class` (`qualified_name`)
        failed at `stage`; the caller stops when `tolerates` is False."""
        letter = DeadLetter(
            self._connector,
            chunk.topic,
            chunk.partition,
            chunk.offsets[position],
            chunk.timestamps[position],
            chunk.keys[position],
            chunk.values[position],
            tuple(chunk.headers[position]),
            error_class_of(error),
            stage,
            error.cause,
            executing_class,
            stacktrace(error),
        )
        if self._log:
            log_failure(letter, self._log_messages, self.tolerates)
        if self.tolerates:
            self._letters.append(letter)

    def flush(self, commit_point: int) -> tuple[dict, int | None]:
        """Write the dead letters before `commit_point` and let them go (a continuous run flushes at each commit;
        the later ones wait for theirs); returns their counts by error class and the destination's scan position
        to store with the commit."""
        due = self._letters.split(commit_point)
        try:
            if not len(due):
                return {}, None
            counts = dict(Counter(letter.error_class for letter in due))
            if self._destination is None:
                return counts, None
            self._destination.write(due)
            return counts, self._destination.scan_from
        finally:
            due.close()


def stacktrace(error: BaseException) -> str:
    """A Python traceback of the error, frames without source lines (cheap enough for every bad record)."""
    frames = [
        f'  File "{frame.f_code.co_filename}", line {line}, in {frame.f_code.co_name}'
        for frame, line in traceback.walk_tb(error.__traceback__)
    ]
    return "\n".join(["Traceback (most recent call last):", *frames, f"{qualified_name(error)}: {error}"]) + "\n"


def qualified_name(step: object) -> str:
    """The module-qualified name of a step: a function, or the class of a converter or partitioner."""
    named = step if callable(step) and hasattr(step, "__qualname__") else type(step)
    return f"{named.__module__}.{named.__qualname__}"


def error_class_of(error: RecordError) -> str:
    return type(error).__name__


def log_failure(letter: DeadLetter, include_messages: bool, tolerated: bool) -> None:
    fields = {
        "topic": letter.topic,
        "partition": letter.partition,
        "offset": letter.offset,
        "error_class": letter.error_class,
        "stage": letter.stage,
        "error": letter.message,
        "tolerated": tolerated,
    }
    if include_messages:
        fields.update(
            key=b64(letter.key), value=b64(letter.value), headers=[[name, b64(value)] for name, value in letter.headers]
        )
    events.emit(events.RECORD_FAILED, level=logging.WARNING if tolerated else logging.ERROR, **fields)


def router_for(settings: DeadLetterSettings, planned: PartitionRange, uploader: Uploader) -> DeadLetterRouter:
    """The range's router; its destination follows `errors.deadletterqueue.*` (only with tolerance all)."""
    if not settings.tolerates:
        return DeadLetterRouter(settings, None)
    if settings.s3_prefix:
        return DeadLetterRouter(settings, S3Destination.from_settings(settings, uploader))
    if settings.topic:
        return DeadLetterRouter(settings, TopicDestination(settings, planned))
    return DeadLetterRouter(settings, None)
