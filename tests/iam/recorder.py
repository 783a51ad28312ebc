"""Record every AWS call a process makes through boto3: service, operation, region and parameters.

A `CallLog` is a JSON-lines file, so that Spark workers (other processes) append to the same log as the driver.
`CallLog.install(principal)` registers botocore's `provide-client-params` hook on this process's default boto3
session (the session `boto3.client` uses), once; clients created afterwards record their calls, and so do clients
of any other boto3 Session created until `uninstall()` (pyiceberg's Glue catalog makes a session of its own). The
log is read back with `calls()`. Bodies and other binary parameters are recorded as placeholders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import boto3

EVENT = "provide-client-params"
_INSTALLED: dict = {}  # the hook clients of any boto3 Session get in this process: {"hook": ..., "unique_id": ...}


@dataclass(frozen=True)
class Call:
    principal: str  # the role (or user) whose credentials made the call
    service: str  # botocore service name, e.g. "dynamodb", "s3", "emr-serverless"
    operation: str  # e.g. "PutItem"
    region: str
    params: dict  # JSON-safe copy of the request parameters

    def __str__(self) -> str:
        return f"{self.principal}: {self.service}.{self.operation}"


class CallLog:
    def __init__(self, path: Path):
        self.path = Path(path)

    def install(self, principal: str) -> None:
        """Record the calls of clients created from now on by `boto3.client` in this process, as `principal`."""
        if boto3.DEFAULT_SESSION is None:
            boto3.setup_default_session()
        hook, unique_id = self._hook(principal), f"{self.path}:{principal}"
        boto3.DEFAULT_SESSION.events.register(EVENT, hook, unique_id=unique_id)
        _INSTALLED.update(hook=hook, unique_id=unique_id)
        _record_every_session()

    @staticmethod
    def uninstall() -> None:
        """Clients of other sessions than the default one no longer record (the default session is the caller's
        to replace)."""
        _INSTALLED.clear()

    def calls(self) -> list[Call]:
        if not self.path.exists():
            return []
        return [Call(**json.loads(line)) for line in self.path.read_text().splitlines() if line]

    def _hook(self, principal: str):
        path = str(self.path)

        def record(params, model, context=None, **_):
            line = json.dumps(
                {
                    "principal": principal,
                    "service": model.service_model.service_name,
                    "operation": model.name,
                    "region": (context or {}).get("client_region") or "",
                    "params": params,
                },
                default=_placeholder,
            )
            with open(path, "a", encoding="utf-8") as log:  # one write per line: appends from workers interleave whole
                log.write(line + "\n")

        return record


def _record_every_session() -> None:
    """Make `boto3.session.Session.client` register the installed hook on each client it creates (once per
    process; a client of the default session already has it, under the same unique id)."""
    original = boto3.session.Session.client
    if getattr(original, "records_calls", False):
        return

    def client(self, *args, **kwargs):
        made = original(self, *args, **kwargs)
        if _INSTALLED:
            made.meta.events.register(EVENT, _INSTALLED["hook"], unique_id=_INSTALLED["unique_id"])
        return made

    client.records_calls = True
    boto3.session.Session.client = client


def _placeholder(value) -> str:
    size = len(value) if isinstance(value, (bytes, bytearray)) else None
    return f"<{type(value).__name__}{'' if size is None else f' {size} bytes'}>"
