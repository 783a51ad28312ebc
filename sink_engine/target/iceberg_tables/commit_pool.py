"""The driver's snapshot commits of several tables at once: at most `iceberg.control.commit.threads` (the Iceberg
Kafka Connect sink's key: its coordinator commits its tables on a thread pool of that size).

Each table's commit is commit.py's, unchanged: its own lease renewal, its own check of the connector's newest
snapshot in the table, its own summary (offsets, `written-below`). What a run repairs after a crash is read per table
(`recover` from each table's newest snapshot of the connector; a routed writer from each table's `written-below`),
so no order among the tables matters: a crash during parallel commits leaves some set of tables committed, which the
next run repairs as it repairs the tables a serial commit got through. What must stay in order is the offsets commit:
it follows every table's commit, so `commit_tables` returns only when every table committed and raises otherwise,
and the offsets stay where they were (the rerun reads those records again; the committed tables skip them).

On a failure no table still waiting for a thread starts its commit; those committing finish (a commit lands whole or
not at all), and the failure is raised naming its table (the first failed table in name order; every failed table is
logged as SNAPSHOT_COMMIT_FAILED).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from sink_engine import events
from sink_engine.errors import SinkError
from sink_engine.offsets import LeaseToken
from sink_engine.target.iceberg_tables.errors import TableError


def commit_tables(
    identifiers: list[str], commit: Callable[[str], int], threads: int, token: LeaseToken
) -> dict[str, int]:
    """`commit(identifier)` for each table, at most `threads` at once, started in the order given; returns table ->
    snapshot id once every one committed (TABLES_COMMITTED). Raises the failure of the first failed table in name
    order (an error that is not the engine's own as a TableError naming the table)."""
    started, stopped = time.monotonic(), threading.Event()

    def guarded(identifier: str) -> int | None:
        if stopped.is_set():
            return None  # another table failed before this one's turn: not started
        try:
            return commit(identifier)
        except BaseException:
            stopped.set()
            raise

    with ThreadPoolExecutor(max(1, min(threads, len(identifiers))), "sink-engine-table-commit") as pool:
        futures = {identifier: pool.submit(guarded, identifier) for identifier in identifiers}
    failed = {i: f.exception() for i, f in futures.items() if f.exception() is not None}
    if failed:
        raise _reported(failed, token)
    events.emit(
        events.TABLES_COMMITTED,
        connector=token.connector,
        epoch=token.epoch,
        tables=len(identifiers),
        threads=threads,
        seconds=round(time.monotonic() - started, 3),
    )
    return {identifier: _committed(future) for identifier, future in futures.items()}


def _committed(future: Future[int | None]) -> int:
    snapshot = future.result()
    assert snapshot is not None  # no table failed: every one started
    return snapshot


def _reported(failed: dict[str, BaseException | None], token: LeaseToken) -> BaseException:
    """The error to raise for these failed tables, each logged."""
    for identifier, error in sorted(failed.items()):
        events.emit(
            events.SNAPSHOT_COMMIT_FAILED,
            logging.ERROR,
            connector=token.connector,
            epoch=token.epoch,
            table=identifier,
            error=f"{type(error).__name__}: {error}",
        )
    identifier = min(failed)
    error = failed[identifier]
    assert error is not None  # only failures are passed
    if not isinstance(error, Exception) or (isinstance(error, SinkError) and identifier in str(error)):
        return error  # a crash (failpoints.SimulatedCrash), or the engine's own error naming the table
    wrapped = TableError(
        f"snapshot commit to table {identifier} failed: {type(error).__name__}: {error}; no offset was committed "
        "(the next run writes the records of the tables that did not commit)"
    )
    wrapped.__cause__ = error
    return wrapped
