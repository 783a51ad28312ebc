"""A restore's progress on a person's terminal (redrawn once a second), and its counts at the end."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TextIO

from sink_engine.progress import TerminalBoard

SHOWN_PARTITIONS = 12


@dataclass
class PartitionCounts:
    read: int = 0  # selected records read from the backup
    present: int = 0  # of those, already in the target (an earlier or killed restore's)
    produced: int = 0  # produced now, each acknowledged before the restore ends


class RestoreBoard:
    """Redraws the per-partition counts on `out` (a terminal) while the restore runs (TerminalBoard)."""

    def __init__(self, out: TextIO):
        self._counts: dict[int, PartitionCounts] = {}
        self._started = time.monotonic()
        self._screen = TerminalBoard(out, lambda: render(self._counts, time.monotonic() - self._started))

    def start(self, counts: dict[int, PartitionCounts]) -> None:
        self._counts = counts
        self._screen.start()

    def stop(self) -> None:
        self._screen.stop()


def render(counts: dict[int, PartitionCounts], seconds: float) -> list[str]:
    """One line per partition (the busiest SHOWN_PARTITIONS), then the totals and the rate."""
    shown = sorted(counts.items(), key=lambda item: (-item[1].read, item[0]))[:SHOWN_PARTITIONS]
    lines = [f"{'partition':>9}  {'read':>12}  {'present':>12}  {'produced':>12}"]
    lines += [f"{p:>9}  {c.read:>12,}  {c.present:>12,}  {c.produced:>12,}" for p, c in sorted(shown)]
    read = sum(c.read for c in counts.values())
    rate = read / seconds if seconds > 0 else 0.0
    lines.append(
        f"{len(counts)} partitions: {read:,} read, {sum(c.present for c in counts.values()):,} already "
        f"present, {sum(c.produced for c in counts.values()):,} produced; {rate:,.0f} records/s, "
        f"{seconds:.0f} s"
    )
    return lines
