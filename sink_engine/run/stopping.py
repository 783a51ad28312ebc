"""How a run is asked to stop: SIGTERM or SIGINT to its Python driver (`stop_on_signals`), or a shutdown of its
driver's JVM, which is held until the Python driver has exited (`JvmShutdownStop`). Both log RUN_STOP_REQUESTED
(`by`: the signal, or `jvm-shutdown`) and set the same `threading.Event`, which a continuous run's driver watches,
and a bounded run's watchdog too (driver/run_timeout.py): each asks its tasks to stop through the lease item, commits
what they closed and releases the lease.

EMR Serverless runs the job with spark-submit: the driver is a JVM (SparkSubmit) that starts the Python driver as its
child and ends the application when it exits. CancelJobRun with a grace period gives the job the time of its JVM
shutdown hooks ("EMR Serverless job run cancellation with grace period", EMR Serverless User Guide,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/job-cancellation-grace-period.html: clean-up
registered with Hadoop's `ShutdownHookManager`, higher priorities first; EMR's own listener for streaming jobs at 60).
A SIGTERM to that JVM runs its hooks and never reaches the Python process (Spark's PythonRunner neither signals nor
waits for it; it is left running with parent 1), so the Python SIGTERM handler alone leaves the run's lease to lapse.

`JvmShutdownStop` registers a hook in Hadoop's manager at `HOOK_PRIORITY`, above EMR's listener and Spark's own hooks
(Spark runs them all from one Hadoop hook at `FileSystem.SHUTDOWN_HOOK_PRIORITY + 30` = 40, SparkContext.stop among
them: Spark's `ShutdownHookManager`), so the SparkContext still serves the run while it stops. The hook is a Python
object called back through py4j (pyspark's callback server): it sets the run's `stop` event, the same event the
Python SIGTERM handler sets, and waits until this Python process exits (its run's commit, lease release and report
done, its output flushed to the JVM, which relays it: `atexit`), at most `timeout_s` (Hadoop's per-hook timeout,
given explicitly: the default is `hadoop.service.shutdown.timeout`, 30 s). Then Spark's hooks stop the context and
the JVM exits. A run that ends by itself removes its hook, so that a later JVM shutdown does not call into a Python
process that is gone.
"""

from __future__ import annotations

import atexit
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from sink_engine import events

if TYPE_CHECKING:
    from py4j.java_gateway import JavaObject
    from pyspark.sql import SparkSession

HOOK_PRIORITY = 100  # above EMR's streaming listener (60) and Spark's hooks (40); AWS's own example uses 100
_EXITING = threading.Event()  # this process is exiting: what a hook that stopped a run waits for


@atexit.register
def _exiting() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    _EXITING.set()


@contextmanager
def stop_on_signals(connector: str) -> Iterator[threading.Event]:
    """An event that SIGTERM and SIGINT to this process set while inside the block (the main thread's: Python runs
    signal handlers there only); the previous handlers are back after it."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(number: int, _frame: FrameType | None) -> None:
        events.emit(events.RUN_STOP_REQUESTED, connector=connector, by=signal.Signals(number).name)
        stop.set()

    numbers = (signal.SIGTERM, signal.SIGINT)
    previous = {number: signal.signal(number, handle) for number in numbers}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class _Hook:
    """The `java.lang.Runnable` the JVM runs at shutdown (a py4j callback into this process)."""

    def __init__(self, connector: str, stop: threading.Event, ended: threading.Event, timeout_s: float):
        self._connector, self._stop, self._ended, self._timeout_s = connector, stop, ended, timeout_s

    def run(self) -> None:
        if not self._ended.is_set():
            events.emit(events.RUN_STOP_REQUESTED, connector=self._connector, by="jvm-shutdown")
            self._stop.set()
        _EXITING.wait(self._timeout_s)

    class Java:
        implements = ["java.lang.Runnable"]


class JvmShutdownStop:
    """Context manager around a run (see the module docstring): while inside it, a shutdown of the driver's JVM sets
    `stop` and waits for this process to exit, at most `timeout_s`."""

    def __init__(self, spark: SparkSession, connector: str, stop: threading.Event, timeout_s: float) -> None:
        gateway = spark.sparkContext._gateway
        assert gateway is not None  # a started SparkContext's py4j gateway
        self._gateway = gateway
        self._ended = threading.Event()
        self._callback = _Hook(connector, stop, self._ended, timeout_s)
        self._timeout_ms = int(timeout_s * 1000)
        self.hook = None  # the Runnable registered in the JVM (a Java Thread never started), from `__enter__` on

    def __enter__(self) -> JvmShutdownStop:
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(self._gateway)
        jvm = self._gateway.jvm
        # One Java object wrapping the callback, which the JVM calls `run` on (a Thread never started runs its target
        # in the caller's thread): Hadoop's manager finds a hook again by identity, and py4j makes a new Java proxy
        # each time it passes a Python object, so the callback itself could never be removed.
        self.hook = jvm.java.lang.Thread(self._callback, "sink-engine-run-stop")
        unit = jvm.java.util.concurrent.TimeUnit.MILLISECONDS
        self._manager().addShutdownHook(self.hook, HOOK_PRIORITY, self._timeout_ms, unit)
        return self

    def __exit__(self, *exc: object) -> None:
        self._ended.set()
        try:
            self._manager().removeShutdownHook(self.hook)
        except Exception as e:  # noqa: BLE001 - Py4JError: the JVM is shutting down (the hook runs or ran) or gone
            logging.getLogger(__name__).debug("shutdown hook not removed: %s", e)

    def _manager(self) -> JavaObject:
        return self._gateway.jvm.org.apache.hadoop.util.ShutdownHookManager.get()
