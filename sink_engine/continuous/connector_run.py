"""The driver's side of one connector of a continuous run: its session (lease, offsets, plan), the lease's renewals,
its target's `CommitCoordinator` (IcebergFormat: one snapshot per table and interval), its progress line, and how it
ends, alone.

`tick` (the driver's loop, every half second): a lease lost ends the connector at once (nothing more is committed);
a share that failed (continuous/share.py puts its end and error in its PROGRESS item) or a coordinator that fails
stops it: its other shares are asked to stop through its lease item, and once they all ended (or half a lease
passed) what they handed on is committed, the lease released and CONNECTOR_FAILED logged naming the connector and
the cause. The other connectors of the job go on meanwhile.
`stop` asks the same of a connector the run is stopping (SIGTERM); `end` settles it once the Spark job ended.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sink_engine import events
from sink_engine.continuous.run_progress import RunProgress
from sink_engine.continuous.share import StreamReport
from sink_engine.driver.job import TaskFailedError
from sink_engine.driver.session import ConnectorSession
from sink_engine.errors import LeaseLostError, SinkError
from sink_engine.target.contract import CommitCoordinator


@dataclass
class ContinuousSummary:
    """What a connector's shares did until they ended."""

    reports: list[StreamReport] = field(default_factory=list)
    seconds: float = 0.0
    executors: tuple[str, ...] = ()

    @property
    def records_written(self) -> int:
        return sum(r.records_written for r in self.reports)

    @property
    def files(self) -> int:
        return sum(r.files for r in self.reports)


class ConnectorRun:
    """One connector of a continuous run, in the driver (module docstring), from its session's opening: the lease is
    renewed from then on; `serve(shares)` once its shares (how many tasks serve it) are known, then `tick`."""

    def __init__(
        self,
        session: ConnectorSession,
        coordinator: CommitCoordinator | None,
        progress: Callable[[int], RunProgress],
        say: Callable[[str], None],
    ) -> None:
        self.session, self._coordinator, self._progress_for, self._say = session, coordinator, progress, say
        self._keeper = session.keeper().__enter__()
        self._shares = 0
        self._progress: RunProgress | None = None
        self.error: SinkError | None = None
        self._coordinator_failed = False
        self._stopping_until: float | None = None
        self.done = False

    @property
    def name(self) -> str:
        return self.session.name

    def serve(self, shares: int) -> None:
        self._shares, self._progress = shares, self._progress_for(shares)

    def fail(self, error: SinkError) -> None:
        """The connector ends before it was served (its plan failed)."""
        self._finish(error, commit=False)

    def tick(self) -> None:
        if self.done or self._progress is None:
            return
        self._progress.tick()
        if self._keeper.lost:
            self._finish(LeaseLostError(self.name), commit=False)
            return
        failed = sorted(error for error in self._progress.ends.values() if error)
        if self._stopping_until is None and failed:
            self.stop(TaskFailedError(failed[0]))
        if self._stopping_until is None and self._coordinator is not None:
            try:
                self._coordinator.tick()
            except SinkError as e:
                self._coordinator_failed = True
                self.stop(e)
        ended = len(self._progress.ends) >= self._shares
        if self._stopping_until is not None and (ended or time.monotonic() >= self._stopping_until):
            self._finish(self.error, commit=not self._coordinator_failed)

    def stop(self, error: SinkError | None = None) -> None:
        """Ask the connector's shares to stop (they commit what they closed); `error`: why, when it failed."""
        if self.done or self._stopping_until is not None:
            return
        self.error = error
        self.session.leases.request_stop(self.session.token)
        self._stopping_until = time.monotonic() + self.session.run.lease_ms / 2000

    def end(self, reports: list[StreamReport], job_error: SinkError | None, budget_s: float) -> None:
        """The Spark job ended (`reports`: this connector's; `job_error`: Spark gave up on the job, unless the run was
        stopping): settle the connector."""
        if self.done:
            return
        if self._keeper.lost or any(r.lease_lost for r in reports):
            self._finish(LeaseLostError(self.name), commit=False)
            return
        failed = [r for r in reports if r.error]
        error = self.error or (TaskFailedError("; ".join(f"{r.tp}: {r.error}" for r in failed)) if failed else None)
        self._finish(error or job_error, commit=not self._coordinator_failed, budget_s=budget_s)

    def _finish(self, error: SinkError | None, commit: bool, budget_s: float | None = None) -> None:
        """Commit what the shares handed on (`commit`), stop renewing, release the lease (unless lost), say why a
        failure ended the connector."""
        self.done, self.error = True, error
        try:
            if commit and self._coordinator is not None:
                self._coordinator.finish(self.session.run.lease_ms / 2000 if budget_s is None else budget_s)
        except SinkError as e:
            self.error = self.error or e
        finally:
            self._keeper.__exit__(None, None, None)
            self.session.release()  # conditional on the lease being still this run's
        if self.error is not None:
            events.emit(events.CONNECTOR_FAILED, logging.ERROR, connector=self.name, cause=str(self.error))
            self._say(f"stopped: {self.error}")
