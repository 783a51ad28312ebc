"""Record every AWS call a process makes through boto3: service, operation, region and parameters.

A `CallLog` is a JSON-lines file, so that Spark workers (other processes) append to the same log as the driver.
`CallLog.install(principal)` registers botocore's `provide-client-params` hook on this process's default boto3
session (the session `boto3.client` uses), once; clients created afterwards record their calls. The log is read
back with `calls()`. Bodies and other binary parameters are recorded as placeholders.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import boto3

EVENT = "provide-client-params"


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
        boto3.DEFAULT_SESSION.events.register(EVENT, self._hook(principal), unique_id=f"{self.path}:{principal}")

    def calls(self) -> list[Call]:
        if not self.path.exists():
            return []
        return [Call(**json.loads(line)) for line in self.path.read_text().splitlines() if line]

    def _hook(self, principal: str):
        path = str(self.path)

        def record(params, model, context=None, **_):
            line = json.dumps({"principal": principal, "service": model.service_model.service_name,
                               "operation": model.name, "region": (context or {}).get("client_region") or "",
                               "params": params}, default=_placeholder)
            with open(path, "a", encoding="utf-8") as log:  # one write per line: appends from workers interleave whole
                log.write(line + "\n")

        return record


def _placeholder(value) -> str:
    size = len(value) if isinstance(value, (bytes, bytearray)) else None
    return f"<{type(value).__name__}{'' if size is None else f' {size} bytes'}>"
