"""`sink.run.timeout.ms` on the driver: the run's deadline, given to every range, and a watchdog that cancels the
run's Spark job when a task has not stopped by the deadline plus a grace (a task stuck outside Kafka never reaches
the check between chunks, task/deadline.py), or when the run, asked to stop (run/stopping.py), did not stop
within a grace."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sink_engine import events
from sink_engine.model import PartitionRange

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class RunWatchdog:
    """Context manager around the Spark job of one run, in the job group `group` (only the run's own jobs are
    cancelled: other connectors' runs in the same Spark application go on). `fired` says whether it cancelled the
    job at the deadline, `stopped` whether it did because the run was asked to stop (`stop` set): it first asks the
    tasks to stop (`ask_tasks`: the lease item's stop request, which they read between chunks and then commit what
    they closed) and cancels the job only if it still runs `stop_grace_s` later."""

    def __init__(
        self,
        spark: SparkSession,
        group: str,
        connector: str,
        timeout_ms: int,
        started_s: float,
        stop: threading.Event | None = None,
        ask_tasks: Callable[[], object] = lambda: None,
        stop_grace_s: float = 0.0,
    ):
        self._spark, self._group, self._connector, self._timeout_ms = spark, group, connector, timeout_ms
        self.deadline_ms = int(started_s * 1000) + timeout_ms if timeout_ms > 0 else None
        self.grace_s = min(60.0, max(1.0, timeout_ms / 4000))
        self.fired = self.stopped = False
        self._timer: threading.Timer | None = None
        self._stop, self._ask_tasks, self._stop_grace_s = stop, ask_tasks, stop_grace_s
        self._exited = threading.Event()

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

    def __exit__(self, *exc: object) -> None:
        self._exited.set()
        if self._timer is not None:
            self._timer.cancel()

    def _watch_stop(self) -> None:
        """Once `stop` is set: ask the tasks to stop, and if the job still runs `stop_grace_s` later, cancel it until it
        ended (again and again: a job submitted after the first cancel is reached too)."""
        assert self._stop is not None
        while not self._stop.is_set():
            if self._exited.wait(0.2):
                return
        try:
            self._ask_tasks()
        except Exception as e:  # noqa: BLE001 - DynamoDB did not take the request: cancel at once
            logging.getLogger(__name__).warning("asking the tasks to stop failed (%s); cancelling its Spark job", e)
        else:
            if self._exited.wait(self._stop_grace_s):
                return
        self.stopped = True
        while not self._exited.is_set():
            self._spark.sparkContext.cancelJobGroup(self._group)
            self._exited.wait(0.2)

    def _cancel(self) -> None:
        self.fired = True
        events.emit(
            events.RUN_TIMED_OUT,
            level=logging.WARNING,
            connector=self._connector,
            timeout_ms=self._timeout_ms,
            grace_s=self.grace_s,
        )
        self._spark.sparkContext.cancelJobGroup(self._group)
