"""A restore's progress on a person's terminal (redrawn once a second), and its counts at the end."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TextIO

SHOWN_PARTITIONS = 12


@dataclass
class PartitionCounts:
    read: int = 0  # selected records read from the backup
    present: int = 0  # of those, already in the target (an earlier or killed restore's)
    produced: int = 0  # produced now, each acknowledged before the restore ends


class RestoreBoard:
    """Redraws the per-partition counts on `out` (a terminal) while the restore runs."""

    def __init__(self, out: TextIO):
        self._out, self._lines = out, 0
        self._counts: dict[int, PartitionCounts] = {}
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="restore-progress", daemon=True)
        self._started = time.monotonic()

    def start(self, counts: dict[int, PartitionCounts]) -> None:
        self._counts = counts
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stopped.set()
            self._thread.join()
            self._draw()

    def _loop(self) -> None:
        while not self._stopped.wait(1.0):
            self._draw()

    def _draw(self) -> None:
        lines = render(self._counts, time.monotonic() - self._started)
        erase = f"\x1b[{self._lines}F\x1b[J" if self._lines else ""
        self._out.write(erase + "\n".join(lines) + "\n")
        self._out.flush()
        self._lines = len(lines)


def render(counts: dict[int, PartitionCounts], seconds: float) -> list[str]:
    """One line per partition (the busiest SHOWN_PARTITIONS), then the totals and the rate."""
    shown = sorted(counts.items(), key=lambda item: (-item[1].read, item[0]))[:SHOWN_PARTITIONS]
    lines = [f"{'partition':>9}  {'read':>12}  {'present':>12}  {'produced':>12}"]
    lines += [f"{p:>9}  {c.read:>12,}  {c.present:>12,}  {c.produced:>12,}" for p, c in sorted(shown)]
    read = sum(c.read for c in counts.values())
    rate = read / seconds if seconds > 0 else 0.0
    lines.append(f"{len(counts)} partitions: {read:,} read, {sum(c.present for c in counts.values()):,} already "
                 f"present, {sum(c.produced for c in counts.values()):,} produced; {rate:,.0f} records/s, "
                 f"{seconds:.0f} s")
    return lines
