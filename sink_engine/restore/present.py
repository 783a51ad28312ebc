"""The original offsets of one source partition known to be in the target: a set of disjoint intervals, adjacent
ones merged, and its text in the `RESTORED#` checkpoint (`"0-9999,10001-10500"`: inclusive ranges, by start)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable


class Present:
    """Offsets as sorted, disjoint, non-adjacent inclusive intervals. Adding in increasing order extends the last
    interval in constant time; an offset below it is inserted (a bisect and a list insert)."""

    def __init__(self, intervals: Iterable[tuple[int, int]] = ()):
        self._starts: list[int] = []
        self._ends: list[int] = []  # inclusive
        for start, end in intervals:
            self.add_range(start, end)

    @classmethod
    def of(cls, offsets: list[int]) -> Present:
        """From offsets in any order, repeats allowed (sorted once: a scan through the partitioner finds a source
        partition's offsets spread over several target partitions)."""
        present = cls()
        for offset in sorted(offsets):
            present.add(offset)
        return present

    def add(self, offset: int) -> None:
        if self._ends and offset == self._ends[-1] + 1:
            self._ends[-1] = offset
        elif not self._ends or offset > self._ends[-1]:
            self._starts.append(offset)
            self._ends.append(offset)
        else:
            self.add_range(offset, offset)

    def add_range(self, start: int, end: int) -> None:
        """Add [start, end], merging every interval it overlaps or touches."""
        i = bisect.bisect_left(self._ends, start - 1)  # the first interval that ends at or after start - 1
        j = bisect.bisect_right(self._starts, end + 1)  # past the last that starts at or before end + 1
        if i < j:
            start, end = min(start, self._starts[i]), max(end, self._ends[j - 1])
        self._starts[i:j] = [start]
        self._ends[i:j] = [end]

    def __contains__(self, offset: int) -> bool:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i >= 0 and offset <= self._ends[i]

    def covers(self, start: int, end: int) -> bool:
        """Whether every offset of [start, end] is present."""
        i = bisect.bisect_right(self._starts, start) - 1
        return i >= 0 and end <= self._ends[i]

    def __len__(self) -> int:
        """The number of intervals."""
        return len(self._starts)

    def intervals(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends))

    def text(self) -> str:
        return ",".join(f"{s}-{e}" if s != e else str(s) for s, e in zip(self._starts, self._ends))

    @classmethod
    def from_text(cls, text: str) -> Present:
        present = cls()
        for part in filter(None, text.split(",")):
            start, _, end = part.partition("-")
            present.add_range(int(start), int(end or start))
        return present
