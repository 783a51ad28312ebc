"""A throwaway PostgreSQL cluster with logical decoding, for the CDC end-to-end test: Debian's package
(`postgresql-15` or another major version under /usr/lib/postgresql/<n>/bin), initdb into a temporary folder, the
server on a free loopback port with `wal_level=logical` (what Debezium's pgoutput connector reads; RDS sets it with
`rds.logical_replication=1`). PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user
Debian's package creates. Clients connect over TCP as the `postgres` superuser, trusted (no password)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from devtools.processes import LOOPBACK, die_with_parent, free_port, stop_process, wait_for_port

USER = "postgres"  # the superuser initdb creates, and the OS user the server runs as when this process is root
SETTINGS = {
    "wal_level": "logical",
    "max_wal_senders": "4",
    "max_replication_slots": "4",
    "fsync": "off",  # a test cluster: durability across an OS crash is not what is tested
    "listen_addresses": LOOPBACK,
}


def bin_dir() -> Path:
    """The newest installed server's binaries; FileNotFoundError naming the package when there is none."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if not found:
        raise FileNotFoundError("PostgreSQL's initdb is not installed: apt-get install postgresql-15 (.ci/run does)")
    return found[-1].parent


class Postgres:
    """`with Postgres() as pg:` a fresh cluster; `pg.sql(...)` runs statements, `pg.rows(table)` reads a table."""

    def __init__(self):
        self.port = free_port()
        self.folder: Path | None = None
        self._process: subprocess.Popen | None = None
        self._owner = pwd.getpwnam(USER) if os.geteuid() == 0 else None

    def __enter__(self) -> Postgres:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="postgres-"))
        if self._owner is not None:
            os.chown(self.folder, self._owner.pw_uid, self._owner.pw_gid)
        binaries, data = bin_dir(), self.folder / "data"
        self._as_owner([str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8"])
        options = [f"-c{key}={value}" for key, value in {**SETTINGS, "unix_socket_directories": self.folder}.items()]
        log = open(self.folder / "server.log", "ab")  # noqa: SIM115 (the child keeps it)
        with log:
            self._process = subprocess.Popen(
                [str(binaries / "postgres"), "-D", str(data), "-p", str(self.port), *options],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=die_with_parent, **self._identity(),
            )  # fmt: skip
        wait_for_port(self.port, self._process, "PostgreSQL")
        self._wait_accepting()

    def stop(self) -> None:
        if self._process is not None:
            stop_process(self._process)
            self._process = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def sql(self, statements: str) -> str:
        """Run `statements` (one transaction each, psql's autocommit) as the superuser; their output, unaligned."""
        command = [str(bin_dir() / "psql"), "-h", LOOPBACK, "-p", str(self.port), "-U", USER, "-d", "postgres"]
        command += ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statements]
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode:
            raise RuntimeError(f"psql failed ({done.returncode}) on {statements!r}: {done.stderr.strip()}")
        return done.stdout

    def rows(self, table: str, order_by: str = "id") -> list[dict]:
        """Every row of `table` as JSON objects (column name to value), ordered by `order_by`."""
        return json.loads(self.sql(f"SELECT coalesce(json_agg(t ORDER BY {order_by}), '[]') FROM {table} t"))

    def _wait_accepting(self, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.sql("SELECT 1")
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _identity(self) -> dict:
        if self._owner is None:
            return {}
        return {"user": self._owner.pw_uid, "group": self._owner.pw_gid, "extra_groups": []}

    def _as_owner(self, command: list[str]) -> None:
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, **self._identity())
        if done.returncode:
            raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr.strip()}")
