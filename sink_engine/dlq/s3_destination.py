"""Dead letters as JSON-lines objects under `errors.deadletterqueue.s3.prefix`, keyed so that reruns
overwrite instead of duplicating.

Key: `<prefix>/<topic>/partition=<p>/<topic>+<p>+<first offset, padded>.json`, one object per window of
WINDOW_OFFSETS source offsets and run: the dead letters of one window that a run writes start at the first
bad record at or after the run's start, which a rerun from the same committed offset finds again (it writes
the same key with the same lines, or more of the same window when more records arrived). A later run starts
past the commit point, so its objects hold other records under other keys.
"""
from __future__ import annotations

from itertools import groupby

from sink_engine.config import SinkConfig
from sink_engine.dlq.letter import DeadLetter
from sink_engine.storage.naming import ObjectNaming

WINDOW_OFFSETS = 10_000


class S3Destination:
    scan_from = None

    def __init__(self, naming: ObjectNaming, uploader):
        self._naming, self._uploader = naming, uploader

    @classmethod
    def from_config(cls, config: SinkConfig, uploader) -> "S3Destination":
        naming = ObjectNaming(config["errors.deadletterqueue.s3.prefix"].strip("/"), config["directory.delim"],
                              config["file.delim"], config["filename.offset.zero.pad.width"])
        return cls(naming, uploader)

    def write(self, letters: list[DeadLetter]) -> None:
        """Submit the objects to the task's uploader; the task drains it before it returns."""
        for key, body in self.objects(letters):
            self._uploader.submit(key, body)

    def objects(self, letters: list[DeadLetter]) -> list[tuple[str, bytes]]:
        """(key, JSON-lines body) per window of WINDOW_OFFSETS offsets, keyed by its first dead letter."""
        found = []
        for _, window in groupby(letters, key=lambda letter: letter.offset // WINDOW_OFFSETS):
            group = list(window)
            first = group[0]
            key = self._naming.key(first.topic, f"partition={first.partition}", first.partition, first.offset,
                                   ".json")
            found.append((key, b"".join(letter.to_json_line() for letter in group)))
        return found
