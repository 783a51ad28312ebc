"""SIGKILLed runs for the fault tests: `python -m sink_engine -v run` in a process group of its own whose events are
read as they come (RunProcess), the moment of a kill (kill_when, PHASES) and the clean run that ends a kill loop
(finish)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

from sink_engine import cli

# The event a kill waits for, and the extra delay (s) drawn after it; start-up kills count from the process start.
PHASES = {
    "start-up": (None, (0.3, 4.0)),
    "write": ("RUN_PLANNED", (0.0, 1.0)),
    "commit": ("FILES_UPLOADED", (0.0, 0.05)),
}


KILLED = -signal.SIGKILL


class RunProcess:
    """`python -m sink_engine -v run` in its own process group; the events it logs are read as they come."""

    def __init__(self, config_path: str):
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sink_engine", "-v", "run", "--config", config_path],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.events: list[str] = []
        self.errors: list[str] = []
        self.changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            start = line.find('{"')
            with self.changed:
                if start >= 0 and '"event"' in line:
                    self.events.append(json.loads(line[start:])["event"])
                elif line.startswith("error:"):
                    self.errors.append(line.strip())
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> bool:
        """SIGKILL the run and everything it started (its Spark JVM and Python workers); False if it had ended."""
        if not self.alive:
            return False
        os.killpg(self.process.pid, signal.SIGKILL)
        return True

    def wait(self, timeout: float = 180) -> int:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code


def kill_when(runs: list[RunProcess], phase: str, rng: random.Random) -> RunProcess | None:
    """Kill the first of `runs` to reach `phase`, after the phase's random delay; returns it, None if none was
    killed (none reached the phase alive)."""
    event, (low, high) = PHASES[phase]
    delay = rng.uniform(low, high)
    if event is None:
        victim = rng.choice(runs)
        time.sleep(max(0.0, victim.started + delay - time.monotonic()))
        return victim if victim.kill() else None
    while any(r.alive for r in runs):
        reached = [r for r in runs if event in r.events]
        if reached:
            time.sleep(delay)
            return reached[0] if reached[0].kill() else None
        time.sleep(0.02)
    return None


def finish(path: str, config, lease_ms: int, capsys) -> list[int]:
    """Clean runs (in this process) until one completes and nothing is left to read; returns their exit codes."""
    codes = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        capsys.readouterr()
        code = cli.main(["run", "--config", path])
        codes.append(code)
        out = capsys.readouterr()
        assert code in (0, 3), out.err
        if code == 0 and ", 0 records," in out.out:
            return codes
        if code == 3:
            time.sleep(lease_ms / 1000)
    raise AssertionError(f"no clean run completed: {codes}")
