"""`sink.run.timeout.ms` inside a task: a range stops reading once its run's deadline has passed, or once its run
was asked to stop (`stop`: a bounded run's SIGTERM, run/stopping.py, read from the lease item by `LeaseStopProbe`).

The check sits between chunks: the chunk read last is not written, and the range ends with RunTimeoutError (or
RunStoppedError), so that it commits what its closed files hold (the commit point of any range that stops early) and
nothing after."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from sink_engine.errors import RunStoppedError, RunTimeoutError
from sink_engine.model import PartitionRange
from sink_engine.records import RecordChunk

if TYPE_CHECKING:
    from sink_engine.offsets import Leases


def within_deadline(
    chunks: Iterable[RecordChunk],
    planned: PartitionRange,
    clock: Callable[[], float] = time.time,
    stop: Callable[[], bool] | None = None,
) -> Iterator[RecordChunk]:
    """The chunks, while `clock()` (epoch seconds) is before `planned.deadline_ms` and `stop()` is false; then
    RunTimeoutError (RunStoppedError) naming the first offset not handled. Neither: the chunks as they are."""
    if planned.deadline_ms is None and stop is None:
        yield from chunks
        return
    for chunk in chunks:
        at = f"{planned.topic}-{planned.partition} stopped at offset {chunk.offsets[0]}"
        if planned.deadline_ms is not None and clock() * 1000 >= planned.deadline_ms:
            raise RunTimeoutError(
                f"{at}: the run passed its sink.run.timeout.ms; the next run goes on from its commit point"
            )
        if stop is not None and stop():
            raise RunStoppedError(f"{at}: the run was asked to stop; the next run goes on from its commit point")
        yield chunk


class LeaseStopProbe:
    """`stop` for a bounded run's tasks: whether the connector's lease item holds a stop request
    (`Leases.request_stop`, made by the driver when the run is asked to stop; the next acquire clears it), read with
    one consistent GetItem at most every `every_s` seconds of the task, never before `every_s` have passed (a short
    task reads nothing, and makes no client: `leases` builds the `Leases` on the first look)."""

    def __init__(
        self, leases: Callable[[], Leases], connector: str, every_s: float, clock: Callable[[], float] = time.monotonic
    ):
        self._make_leases, self._connector, self._every_s, self._clock = leases, connector, every_s, clock
        self._leases: Leases | None = None
        self._checked = clock()
        self._stopped = False

    def __call__(self) -> bool:
        if not self._stopped and self._clock() - self._checked >= self._every_s:
            if self._leases is None:
                self._leases = self._make_leases()
            lease = self._leases.describe(self._connector)
            self._stopped = lease is not None and lease["stop_requested"]
            self._checked = self._clock()
        return self._stopped
