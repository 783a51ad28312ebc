"""The counted failpoint: `SINK_ENGINE_FAILPOINT=<name>@<n>` SIGKILLs the process at the n-th tick, no sooner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from sink_engine.failpoints import ENV_VAR, KillCountdown

TICKS = """
from sink_engine.failpoints import KillCountdown
countdown = KillCountdown("restore_sigkill")
for i in range(1, 6):
    print(i, flush=True)
    countdown.tick()
"""


def ticked(armed: str | None) -> tuple[int, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if armed:
        env[ENV_VAR] = armed
    done = subprocess.run(
        [sys.executable, "-c", TICKS], env=env, capture_output=True, text=True, timeout=60, cwd=os.getcwd()
    )
    return done.returncode, done.stdout.split()


def test_armed_it_sigkills_the_process_at_the_nth_tick():
    assert ticked("restore_sigkill@3") == (-signal.SIGKILL, ["1", "2", "3"])


def test_unarmed_or_armed_for_another_name_it_does_nothing():
    assert ticked(None) == (0, ["1", "2", "3", "4", "5"])
    assert ticked("after_first_commit") == (0, ["1", "2", "3", "4", "5"])


@pytest.mark.parametrize("armed", ["restore_sigkill", "restore_sigkill@0", "restore_sigkill@x"])
def test_armed_without_a_count_is_refused_rather_than_never_firing(monkeypatch, armed):
    monkeypatch.setenv(ENV_VAR, armed)
    with pytest.raises(AssertionError, match="restore_sigkill@<n>"):
        KillCountdown("restore_sigkill")
