"""Failpoints for crash tests: `SINK_ENGINE_FAILPOINT=<name>` makes the run die at that point.

Names: `after_upload_before_commit` (all files uploaded, no offset committed),
`after_snapshot_before_commit` (IcebergFormat: the tables' snapshots committed, no offset in DynamoDB),
`after_first_commit` (one topic-partition committed, the others not).

Spark workers do not see environment changes made after the session started, so a failpoint inside a task is
armed with a file instead (`arm_task_failpoint`): `task_mid_range` kills the Python worker reading a
topic-partition (`os._exit`) once its first chunk of records is written, in as many attempts as armed (one by
default, so that Spark's retry of the task goes on); `task_stall` makes it hang there instead (a task stuck outside
Kafka, for `sink.run.timeout.ms`); `task_pause` holds it there until the test lets it go on
(`release_task_failpoint`: a task caught mid-range when its run is asked to stop).

A kill from outside at a random moment may land after the work it meant to interrupt is done (on a loaded machine,
a restore of a thousand records can finish within the delay). A counted failpoint places it instead:
`SINK_ENGINE_FAILPOINT=restore_sigkill@<n>` SIGKILLs the restore process as it hands its n-th record to the
producer (`KillCountdown`); what the producer still holds unsent is lost, what it sent may land, as with a kill
from outside. `restore_sigstop@<n>` stalls it there instead: it waits until the producer has delivered what it
holds, then SIGSTOPs itself (every thread, its lease renewals too) until the test sends SIGCONT: a restore paused
past its lease while another takes over, with nothing in flight.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ENV_VAR = "SINK_ENGINE_FAILPOINT"
NAMES = ("after_upload_before_commit", "after_snapshot_before_commit", "after_first_commit")
TASK_NAMES = ("task_mid_range", "task_stall", "task_pause")
COUNTED_NAMES = ("restore_sigkill", "restore_sigstop")
STALL_SECONDS = 600
KILLED_EXIT = 70


class SimulatedCrash(BaseException):
    """Raised at an armed failpoint. A BaseException so that no handler cleans up: the run dies as in a crash."""


def failpoint(name: str) -> None:
    """Die here if the environment arms this failpoint."""
    assert name in NAMES, name
    if os.environ.get(ENV_VAR) == name:
        raise SimulatedCrash(f"failpoint {name} triggered")


class KillCountdown:
    """`tick()` sends this process `sig` at its n-th call when the environment arms `name` as `<name>@<n>` (after
    calling `before`); else does nothing. The environment is read once, when the countdown is made."""

    def __init__(self, name: str, sig: int = signal.SIGKILL, before: Callable[[], object] = lambda: None):
        assert name in COUNTED_NAMES, name
        armed, _, count = os.environ.get(ENV_VAR, "").partition("@")
        self._sig, self._before = sig, before
        self._left = 0
        if armed == name:
            assert count.isdigit() and int(count) > 0, f"{ENV_VAR}={armed}@{count}: arm it as {name}@<n>, n > 0"
            self._left = int(count)

    def tick(self) -> None:
        if self._left:
            self._left -= 1
            if not self._left:
                self._before()
                os.kill(os.getpid(), self._sig)


def arm_task_failpoint(name: str, scope: str, times: int = 1) -> Path:
    """Arm a task failpoint for the next `times` attempts in one scope (`topic-partition`); returns its file."""
    assert name in TASK_NAMES and times > 0, (name, times)
    path = _arm_file(name, scope)
    _fired_file(path).unlink(missing_ok=True)
    if name == "task_pause":
        _held_file(path).touch()
    path.write_text(str(times))
    return path


def release_task_failpoint(name: str, scope: str) -> None:
    """Let a task held by `task_pause` go on."""
    _held_file(_arm_file(name, scope)).unlink(missing_ok=True)


def task_failpoint(name: str, scope: str) -> None:
    """Kill this process without any cleanup (`task_stall`: hang for STALL_SECONDS; `task_pause`: until released,
    at most as long) if `arm_task_failpoint(name, scope)` armed it; counts one down."""
    assert name in TASK_NAMES, name
    path = _arm_file(name, scope)
    try:
        left = int(path.read_text() or "1")
    except FileNotFoundError:
        return
    _fired_file(path).write_text(str(os.getpid()))
    if left > 1:
        path.write_text(str(left - 1))
    else:
        path.unlink(missing_ok=True)
    if name == "task_stall":
        time.sleep(STALL_SECONDS)
        return
    if name == "task_pause":
        deadline = time.monotonic() + STALL_SECONDS
        while _held_file(path).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return
    os._exit(KILLED_EXIT)


def task_failpoint_fired(name: str, scope: str) -> int | None:
    """The process id of the Python worker in which the armed task failpoint last fired, None before it fired
    (a test kills that worker's executor while the task stalls there, for example)."""
    try:
        return int(_fired_file(_arm_file(name, scope)).read_text())
    except (FileNotFoundError, ValueError):
        return None


def _fired_file(armed: Path) -> Path:
    return armed.with_name(armed.name + ".fired")


def _held_file(armed: Path) -> Path:
    return armed.with_name(armed.name + ".held")


def _arm_file(name: str, scope: str) -> Path:
    return Path(tempfile.gettempdir()) / f"sink-engine-failpoint.{name}.{scope}"
