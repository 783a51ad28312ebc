"""Kafka Connect's own transforms as an oracle: devtools/jvm/connect-transforms/ConnectTransformsOracle.java, one JVM
per test module (Java's single-file source mode, against the jars `make connect-transforms`, a part of `make venv`,
copies into .venv/connect-transforms/libs from devtools/jvm/connect-transforms/pom.xml), spoken to in JSON lines.

A `WireRecord` is a record as a topic holds it: key and value as the bytes a JsonConverter reads (`WirePart`, with
its schemas.enable), headers as bytes. `TransformsOracle.run(config, records)` returns, per record, an outcome:
`{"dropped": True}`, `{"error": "<Java class>: <message>"}` or the record out, `{"topic", "partition", "offset",
"timestamp", "key", "value", "headers"}` with key, value and each header's value a JsonConverter envelope
(`{"schema": ..., "payload": ...}`, None for a null value without a schema; headers `[name, envelope]`); or, for
a chain Connect does not configure, `{"config_error": "<Java class>: <message>"}` for the whole batch."""

from __future__ import annotations

import base64
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ORACLE = (
    Path(__file__).resolve().parent.parent / "devtools" / "jvm" / "connect-transforms" / "ConnectTransformsOracle.java"
)
LIBS = Path(sys.prefix) / "connect-transforms" / "libs"


@dataclass(frozen=True)
class WirePart:
    schemas: bool  # the JsonConverter's schemas.enable: an envelope, or plain JSON
    data: bytes


@dataclass(frozen=True)
class WireRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: WirePart | None
    value: WirePart | None
    headers: tuple[tuple[str, bytes | None], ...] = field(default=())

    def request(self) -> dict[str, Any]:
        def part(p: WirePart | None) -> dict | None:
            return None if p is None else {"schemas": p.schemas, "data": p.data.decode()}

        return {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "timestamp": self.timestamp,
            "key": part(self.key),
            "value": part(self.value),
            "headers": [
                [name, None if data is None else base64.b64encode(data).decode()] for name, data in self.headers
            ],
        }


class TransformsOracle:
    """One JVM running ConnectTransformsOracle.java; `close` ends it."""

    def __init__(self):
        if not (LIBS.parent / ".installed").exists():
            raise RuntimeError(
                f"connect-transforms' jars are not in {LIBS}: run `make venv` (its `connect-transforms` target)"
            )
        self._process = subprocess.Popen(
            ["java", "-cp", f"{LIBS}/*", str(ORACLE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def run(self, config: dict[str, str], records: list[WireRecord]) -> dict[str, Any]:
        """`{"results": [outcome, ...]}` (one per record) or `{"config_error": ...}`."""
        assert self._process.stdin is not None and self._process.stdout is not None
        request = {"config": config, "records": [record.request() for record in records]}
        self._process.stdin.write(orjson.dumps(request) + b"\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the oracle JVM ended (exit {self._process.wait()})")
        return orjson.loads(line)

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)
