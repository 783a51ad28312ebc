"""Progress of a run on a person's terminal: records and files per partition, records/s, what is left.

Spark tasks report through small files in a directory of the driver's machine (`TaskProgress`), which the
driver shows (`ProgressBoard`). That needs the tasks on the driver's machine, so `sink-engine run` shows a
board only when it runs Spark in local mode and its output is a terminal; elsewhere (a pipe, EMR) the run
logs its structured events only.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from typing import TextIO

from sink_engine.model import PartitionRange, TopicPartition

REPORT_EVERY_S = 0.5
SHOWN_PARTITIONS = 12  # the partitions with the most left; the others are summed on one line


class TaskProgress:
    """A task's reports for one range: `update` at most every REPORT_EVERY_S seconds, `finish` always."""

    def __init__(self, directory: str, planned: PartitionRange):
        self._path = os.path.join(directory, f"{planned.topic}+{planned.partition}.json")
        self._reported_at = 0.0

    def update(self, position: int, records: int, files: int) -> None:
        if time.monotonic() - self._reported_at >= REPORT_EVERY_S:
            self.finish(position, records, files)

    def finish(self, position: int, records: int, files: int) -> None:
        """`position`: the next offset to read; `records` read so far; `files` closed so far."""
        self._reported_at = time.monotonic()
        temporary = f"{self._path}.{os.getpid()}.tmp"
        with open(temporary, "w") as out:
            json.dump({"position": position, "records": records, "files": files}, out)
        os.replace(temporary, self._path)


class TerminalBoard:
    """Redraws the block of lines `lines()` gives on `out` (a terminal) once a second from `start` to `stop`, and
    once more at `stop`. With `totals_every_s` (`out` is a pipe or a log, which cannot be redrawn) it writes instead
    the block's last line, its totals, that often."""

    def __init__(self, out: TextIO, lines: Callable[[], list[str]], totals_every_s: float | None = None):
        self._out, self._lines, self._drawn = out, lines, 0
        self._every_s, self._totals = totals_every_s or 1.0, totals_every_s is not None
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._redraw_until_stopped, name="progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Draw the last state (when started)."""
        if self._thread is not None:
            self._stopped.set()
            self._thread.join()
            self._draw()

    def _redraw_until_stopped(self) -> None:
        while not self._stopped.wait(self._every_s):
            self._draw()

    def _draw(self) -> None:
        lines = self._lines()
        if self._totals:
            self._out.write(f"progress: {lines[-1]}\n")
            self._out.flush()
            return
        erase = f"\x1b[{self._drawn}F\x1b[J" if self._drawn else ""
        self._out.write(erase + "\n".join(lines) + "\n")
        self._out.flush()
        self._drawn = len(lines)


class ProgressBoard:
    """A run's board: one line per partition from the tasks' reports in `directory` (TerminalBoard); on a pipe or a
    log (`totals_every_s`), its totals line that often."""

    def __init__(self, out: TextIO, totals_every_s: float | None = None):
        self.directory = tempfile.mkdtemp(prefix="sink-engine-progress-")
        self._ranges: list[PartitionRange] = []
        self._started = 0.0
        self._screen = TerminalBoard(
            out, lambda: render(self._ranges, self._reports(), time.monotonic() - self._started), totals_every_s
        )

    def start(self, ranges: list[PartitionRange]) -> None:
        self._ranges, self._started = [r for r in ranges if len(r)], time.monotonic()
        self._screen.start()

    def stop(self) -> None:
        """Draw the last state and remove the reports."""
        self._screen.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _reports(self) -> dict[TopicPartition, dict]:
        reports = {}
        for planned in self._ranges:
            try:
                with open(os.path.join(self.directory, f"{planned.topic}+{planned.partition}.json")) as f:
                    reports[planned.tp] = json.load(f)
            except (OSError, ValueError):  # not reported yet
                continue
        return reports


def render(ranges: list[PartitionRange], reports: dict, seconds: float) -> list[str]:
    """The board's lines: one per partition (those with the most left first), then the totals."""
    rows = []
    for planned in ranges:
        report = reports.get(planned.tp, {"position": planned.start_offset, "records": 0, "files": 0})
        left = max(0, planned.end_offset - max(report["position"], planned.start_offset))
        rows.append((left, f"{planned.topic}-{planned.partition}", report["records"], report["files"]))
    rows.sort(key=lambda row: (-row[0], row[1]))
    width = max([len(row[1]) for row in rows[:SHOWN_PARTITIONS]] + [len("partition")])
    lines = [f"{'partition':<{width}}  {'records':>12}  {'files':>6}  {'left':>12}"]
    lines += [
        f"{name:<{width}}  {records:>12,}  {files:>6,}  {left:>12,}"
        for left, name, records, files in rows[:SHOWN_PARTITIONS]
    ]
    if len(rows) > SHOWN_PARTITIONS:
        rest = rows[SHOWN_PARTITIONS:]
        lines.append(
            f"{f'{len(rest)} more':<{width}}  {sum(r[2] for r in rest):>12,}  {sum(r[3] for r in rest):>6,}"
            f"  {sum(r[0] for r in rest):>12,}"
        )
    records, files, left = sum(r[2] for r in rows), sum(r[3] for r in rows), sum(r[0] for r in rows)
    rate = records / seconds if seconds > 0 else 0.0
    lines.append(
        f"{len(rows)} partitions: {records:,} records read, {files:,} files closed, {left:,} left; "
        f"{rate:,.0f} records/s, {seconds:.0f} s"
    )
    return lines
