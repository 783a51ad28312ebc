"""`LetterSpool`: a range's dead letters, in the order they were reported (offset order), with a bounded part in
memory.

The router must hold a dead letter until the commit point is known: a letter past it is not written (the next run
reads its record again and reports it again), and the S3 destination keys an object by its first letter, so a
letter written early under a key this run chose would be written again under another by the next run. Letters
are therefore never sent before the commit point, but past `memory_bytes` (their key, value, headers, message and
stack trace) the ones held move to an anonymous temporary file (pickled one after another, deleted when closed or
when the process ends) and are streamed back from it in order. Memory holds at most `memory_bytes` plus one letter.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from typing import IO

from sink_engine.dlq.letter import DeadLetter

MEMORY_BYTES = 8 * 1024 * 1024


class LetterSpool:
    """Contract: `append` letters in offset order; iterating yields them in that order (spilled, then in memory);
    `split(point)` keeps the letters at or past `point` and returns a spool of those before it."""

    def __init__(self, memory_bytes: int = MEMORY_BYTES):
        self.memory_bytes = memory_bytes
        self._memory: list[DeadLetter] = []
        self._held = 0  # the size of the letters in `_memory`
        self._file: IO[bytes] | None = None  # the letters spilled, older than those in memory
        self._spilled = 0

    def __len__(self) -> int:
        return self._spilled + len(self._memory)

    @property
    def in_memory(self) -> int:
        """How many letters are held in memory (the rest are in the temporary file)."""
        return len(self._memory)

    def append(self, letter: DeadLetter) -> None:
        self._memory.append(letter)
        self._held += size_of(letter)
        if self._held > self.memory_bytes:
            self._spill()

    def __iter__(self) -> Iterator[DeadLetter]:
        """The letters in order, streamed from the file then memory (one iteration at a time)."""
        if self._file is not None:
            self._file.seek(0)
            for _ in range(self._spilled):
                yield pickle.load(self._file)
        yield from list(self._memory)

    def split(self, point: int) -> LetterSpool:
        """The letters before `point`, as a spool of their own (the caller closes it); this spool keeps the others."""
        due, rest = LetterSpool(self.memory_bytes), LetterSpool(self.memory_bytes)
        for letter in self:
            (due if letter.offset < point else rest).append(letter)
        self.close()
        self._memory, self._held, self._file, self._spilled = rest._memory, rest._held, rest._file, rest._spilled
        return due

    def close(self) -> None:
        """Delete the temporary file, if any (the letters in memory stay)."""
        if self._file is not None:
            self._file.close()
        self._file, self._spilled = None, 0

    def _spill(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="sink-engine-dead-letters-")  # noqa: SIM115 (closed by close)
        self._file.seek(0, 2)
        for letter in self._memory:
            pickle.dump(letter, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._spilled += len(self._memory)
        self._memory, self._held = [], 0


def size_of(letter: DeadLetter) -> int:
    """About the bytes a letter holds: its key, value, headers, error message and stack trace."""
    headers = sum(len(name) + len(value or b"") for name, value in letter.headers)
    return (
        len(letter.key or b"") + len(letter.value or b"") + headers + len(letter.message) + len(letter.stacktrace) + 200
    )
