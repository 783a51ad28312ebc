"""Child processes of the local stack: free loopback ports, spawning a server that dies with its parent, waiting for
its port, stopping it."""

from __future__ import annotations

import ctypes
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

LOOPBACK = "127.0.0.1"
PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, name: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode} during start-up")
        try:
            socket.create_connection((LOOPBACK, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on {LOOPBACK}:{port} within {timeout_s}s")


def die_with_parent() -> None:
    """In the child: be terminated when the process that started the stack dies, even by SIGKILL (Linux)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(command: list[str], env: dict | None = None, log_path: Path | None = None) -> subprocess.Popen:
    """Start a server in its own session, terminated with its parent; its output to `log_path` or discarded."""
    log = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115 (the child keeps it)
    try:
        return subprocess.Popen(
            command,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent,
            env=env,
        )
    finally:
        if log_path is not None:
            log.close()  # type: ignore[union-attr]


def stop_process(process: subprocess.Popen, timeout_s: float = 10) -> None:
    """SIGTERM, then SIGKILL after `timeout_s`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
