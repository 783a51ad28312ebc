"""Running IcebergFormat connectors in tests: a run parked in its snapshot commit, config files."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from pyiceberg.table import Table

from sink_engine.driver.job import run_job
from sink_engine.failpoints import SimulatedCrash
from sink_engine.target.iceberg_tables import commit as table_commit
from sink_engine.target.iceberg_tables.catalog import open_catalog
from tests.dlq_corpus import raw_config


class CatalogGate:
    """The real catalog, except that the driver's first `method` call of its snapshot commit waits until `open()`
    (the calls of `recover` pass: the gate arms itself on the first renewal check of the commit)."""

    def __init__(self, catalog, method: str):
        self._catalog, self._method = catalog, method
        self.armed, self.reached, self._opened = False, threading.Event(), threading.Event()

    def load_table(self, identifier):
        """The table, bound to this gate, so that its commits go through it."""
        if self._method == "load_table":
            self._wait()
        table = self._catalog.load_table(identifier)
        return Table(table.name(), table.metadata, table.metadata_location, table.io, self)

    def commit_table(self, *args, **kwargs):
        if self._method == "commit_table":
            self._wait()
        return self._catalog.commit_table(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._catalog, name)

    def _wait(self) -> None:
        if self.armed and not self.reached.is_set():
            self.reached.set()
            assert self._opened.wait(120), "the gate was never opened"

    def open(self) -> None:
        self._opened.set()


class ParkedRun:
    """run_job on a thread, parked at its CatalogGate; `finish` opens the gate and returns the summary or error."""

    def __init__(self, config, spark, dynamodb, gate: CatalogGate):
        self.gate, self.outcome = gate, None
        self._thread = threading.Thread(target=self._run, args=(config, spark, dynamodb))
        self._thread.start()
        assert gate.reached.wait(180), f"the run did not reach its snapshot commit: {self.outcome!r}"

    def _run(self, config, spark, dynamodb) -> None:
        try:
            self.outcome = run_job(config, spark, dynamodb)
        except Exception as e:  # checked by the test
            self.outcome = e
            self.gate.reached.set()

    def finish(self):
        self.gate.open()
        self._thread.join(timeout=180)
        return self.outcome


def gate_first_catalog(monkeypatch, gate: CatalogGate) -> None:
    """The first TableCommits (the parked run's) uses the gate, armed when its commit starts; later ones the real
    catalog."""
    used = []
    real_commit = table_commit.TableCommits.commit

    def catalog(self):
        if not used:
            used.append(self)
        return gate if self is used[0] else open_catalog(self._settings)

    def commit(self, *args, **kwargs):
        if self is used[0]:
            gate.armed = True
        return real_commit(self, *args, **kwargs)

    monkeypatch.setattr(table_commit.TableCommits, "catalog", property(catalog))
    monkeypatch.setattr(table_commit.TableCommits, "commit", commit)


def write_config(config, path: Path) -> Path:
    """The config as a connector JSON file (for the command line)."""
    path.write_text(orjson.dumps({"name": config.name, "config": raw_config(config)}).decode())
    return path


@contextmanager
def crash_after_table_commits(count: int) -> Iterator[list[str]]:
    """A run's table snapshot commits die after `count` of them (SimulatedCrash from the next: a crash between two
    tables' commits); yields the tables committed meanwhile. Which tables those are follows the commit threads'
    order: the first `count` in name order with `iceberg.control.commit.threads=1`, any `count` of them with more
    threads than tables (then every table's commit starts at once)."""
    real, committed, lock = table_commit.TableCommits._commit_table, [], threading.Lock()

    def commit(self, identifier, *args, **kwargs):
        with lock:
            if len(committed) == count:
                raise SimulatedCrash("between table commits")
            committed.append(identifier)
        return real(self, identifier, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(table_commit.TableCommits, "_commit_table", commit)
        yield committed
