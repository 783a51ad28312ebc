"""CPU seconds of a process tree, for the bench: this process and its descendants (the Spark JVM and its
Python workers), without the local stack's broker and S3 emulator, which are descendants too."""

from __future__ import annotations

import psutil


class TreeCpu:
    """`sample()` gives CPU seconds per process kind ("python", "java") since the tree was created, counting
    the exited children that each process has waited for (Spark's forked Python workers)."""

    def __init__(self, excluded_pids: set[int]):
        self._root, self._excluded = psutil.Process(), excluded_pids

    @property
    def excluded(self) -> frozenset[int]:
        """The processes left out, with their descendants."""
        return frozenset(self._excluded)

    @classmethod
    def without_children_so_far(cls) -> TreeCpu:
        """This process's tree less the children it has now and their descendants (the local stack's broker and S3
        emulator, started before)."""
        return cls({p.pid for p in psutil.Process().children()})

    def sample(self) -> dict[str, float]:
        seconds: dict[str, float] = {}
        for process in [self._root] + self._root.children(recursive=True):
            if process.pid in self._excluded or any(p.pid in self._excluded for p in _ancestors(process)):
                continue
            try:
                times, kind = process.cpu_times(), "java" if process.name() == "java" else "python"
            except psutil.NoSuchProcess:
                continue
            seconds[kind] = (
                seconds.get(kind, 0.0) + times.user + times.system + times.children_user + times.children_system
            )
        return seconds

    @staticmethod
    def spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        return {kind: after[kind] - before.get(kind, 0.0) for kind in after}


def _ancestors(process: psutil.Process) -> list[psutil.Process]:
    try:
        return process.parents()
    except psutil.NoSuchProcess:
        return []
