"""Several tables' snapshot commits at once (target/iceberg_tables/commit_pool.py): bounded by the thread count, every
table's snapshot returned, and a failure raised naming its table, the tables still waiting left uncommitted."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from sink_engine.failpoints import SimulatedCrash
from sink_engine.offsets import LeaseToken
from sink_engine.target.iceberg_tables.commit_pool import commit_tables
from sink_engine.target.iceberg_tables.errors import TableCommitConflictError, TableError

TOKEN = LeaseToken("orders-sink", "owner-1", 7)
TABLES = [f"lake.t{n:02d}" for n in range(12)]


class Commits:
    """A table's commit that takes `seconds`, raising the error given for it; records the most at once."""

    def __init__(self, errors: dict[str, BaseException] | None = None, seconds: float = 0.02):
        self.errors, self.seconds = errors or {}, seconds
        self.started: list[str] = []
        self.running = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, identifier: str) -> int:
        with self._lock:
            self.started.append(identifier)
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(self.seconds)
        with self._lock:
            self.running -= 1
        if identifier in self.errors:
            raise self.errors[identifier]
        return TABLES.index(identifier)


def events_named(caplog, name: str) -> list[dict]:
    found = [json.loads(r.getMessage()) for r in caplog.records if r.getMessage().startswith("{")]
    return [e for e in found if e["event"] == name]


def test_tables_commit_at_most_threads_at_once_and_each_snapshot_is_returned(caplog):
    caplog.set_level(logging.INFO, logger="sink_engine")
    commits = Commits()
    # given 12 tables and 3 threads, when they commit
    snapshots = commit_tables(TABLES, commits, 3, TOKEN)
    # then every table committed, never more than 3 at once, and more than one at a time
    assert snapshots == {t: i for i, t in enumerate(TABLES)}
    assert 1 < commits.most <= 3
    [event] = events_named(caplog, "TABLES_COMMITTED")
    assert (event["tables"], event["threads"], event["connector"]) == (12, 3, "orders-sink")


def test_one_thread_commits_the_tables_one_after_another_in_the_order_given():
    commits = Commits(seconds=0)
    commit_tables(TABLES, commits, 1, TOKEN)
    assert commits.started == TABLES and commits.most == 1


def test_a_failed_table_stops_the_commit_naming_it_and_no_waiting_table_starts(caplog):
    caplog.set_level(logging.INFO, logger="sink_engine")
    # given one thread and a catalog error on the third table's commit
    commits = Commits({TABLES[2]: RuntimeError("the catalog refused")}, seconds=0)
    # when the tables commit, then the run's error names the table, the error kept as its cause
    with pytest.raises(TableError, match=r"snapshot commit to table lake\.t02 failed: RuntimeError: the catalog") as e:
        commit_tables(TABLES, commits, 1, TOKEN)
    assert isinstance(e.value.__cause__, RuntimeError)
    # and no table after it started its commit, and the failure was logged, with no TABLES_COMMITTED
    assert commits.started == TABLES[:3]
    assert [f["table"] for f in events_named(caplog, "SNAPSHOT_COMMIT_FAILED")] == ["lake.t02"]
    assert events_named(caplog, "TABLES_COMMITTED") == []


def test_tables_committing_when_one_fails_finish_and_the_first_failed_in_name_order_is_raised(caplog):
    caplog.set_level(logging.INFO, logger="sink_engine")
    # given four threads and two failing tables among the first four
    errors = {TABLES[3]: RuntimeError("late"), TABLES[1]: OSError("early")}
    commits = Commits(errors, seconds=0.05)
    with pytest.raises(TableError, match=r"table lake\.t01 failed: OSError: early"):
        commit_tables(TABLES, commits, 4, TOKEN)
    # then the four that had started finished, and each failure is logged
    assert set(TABLES[:4]) <= set(commits.started) and commits.running == 0
    assert len(commits.started) < len(TABLES)
    assert [f["table"] for f in events_named(caplog, "SNAPSHOT_COMMIT_FAILED")] == ["lake.t01", "lake.t03"]


@pytest.mark.parametrize(
    "error",
    [
        TableCommitConflictError("orders-sink", "lake.t04", "the run's lease (epoch 7) is no longer held"),
        SimulatedCrash("between table commits"),
    ],
)
def test_a_conflict_or_a_crash_is_raised_as_it_is(error):
    with pytest.raises(type(error)) as raised:
        commit_tables(TABLES, Commits({TABLES[4]: error}, seconds=0), 2, TOKEN)
    assert raised.value is error
