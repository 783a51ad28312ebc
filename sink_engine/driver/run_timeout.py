"""`sink.run.timeout.ms` on the driver: the run's deadline, given to every range, and a watchdog that cancels the
run's Spark job when a task has not stopped by the deadline plus a grace (a task stuck outside Kafka never reaches
the check between chunks, task/deadline.py), or at once when the run is asked to stop (driver/stopping.py)."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

from sink_engine import events
from sink_engine.model import PartitionRange


class RunWatchdog:
    """Context manager around the Spark job of one run. `fired` says whether it cancelled the job at the deadline,
    `stopped` whether it did because `stop` was set."""

    def __init__(self, spark, connector: str, timeout_ms: int, started_s: float, stop: threading.Event | None = None):
        self._spark, self._connector, self._timeout_ms = spark, connector, timeout_ms
        self.deadline_ms = int(started_s * 1000) + timeout_ms if timeout_ms > 0 else None
        self.grace_s = min(60.0, max(1.0, timeout_ms / 4000))
        self.fired = self.stopped = False
        self._timer: threading.Timer | None = None
        self._stop, self._exited = stop, threading.Event()

    def bounded(self, ranges: list[PartitionRange]) -> list[PartitionRange]:
        """The ranges, each carrying the run's deadline."""
        return [dataclasses.replace(r, deadline_ms=self.deadline_ms) for r in ranges]

    def __enter__(self) -> RunWatchdog:
        if self.deadline_ms is not None:
            wait = max(0.0, self.deadline_ms / 1000 - time.time()) + self.grace_s
            self._timer = threading.Timer(wait, self._cancel)
            self._timer.daemon = True
            self._timer.start()
        if self._stop is not None:
            threading.Thread(target=self._watch_stop, name="run-stop-watch", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._exited.set()
        if self._timer is not None:
            self._timer.cancel()

    def _watch_stop(self) -> None:
        """Once `stop` is set, cancel the run's Spark job until it ended (again and again: a stop set before the job
        was submitted reaches it too)."""
        assert self._stop is not None
        while not self._exited.wait(0.2):
            if self._stop.is_set():
                self.stopped = True
                self._spark.sparkContext.cancelAllJobs()

    def _cancel(self) -> None:
        self.fired = True
        events.emit(
            events.RUN_TIMED_OUT,
            level=logging.WARNING,
            connector=self._connector,
            timeout_ms=self._timeout_ms,
            grace_s=self.grace_s,
        )
        self._spark.sparkContext.cancelAllJobs()
