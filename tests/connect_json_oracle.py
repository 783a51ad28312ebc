"""Kafka's own JsonConverter as an oracle: devtools/jvm/connect-json/ConnectJsonOracle.java, run in Java's
single-file source mode against connect-json's jars (`make connect-json`, a part of `make venv`, copies them into
.venv/connect-json/libs from devtools/jvm/connect-json/pom.xml). `oracle_cases` gives, for a Connect value of each
type, the envelope JsonConverter writes with schemas.enable=true and the JSON it writes with schemas.enable=false
(what the Confluent S3 sink's JsonFormat writes for that value)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ORACLE = Path(__file__).resolve().parent.parent / "devtools" / "jvm" / "connect-json" / "ConnectJsonOracle.java"
LIBS = Path(sys.prefix) / "connect-json" / "libs"


@dataclass(frozen=True)
class OracleCase:
    name: str
    envelope: bytes  # JsonConverter.fromConnectData with schemas.enable=true
    plain: bytes  # the same with schemas.enable=false


def oracle_cases() -> list[OracleCase]:
    """Every case the oracle writes; RuntimeError naming `make venv` when the jars are not installed."""
    if not (LIBS.parent / ".installed").exists():
        raise RuntimeError(f"connect-json's jars are not in {LIBS}: run `make venv` (its `connect-json` target)")
    done = subprocess.run(["java", "-cp", f"{LIBS}/*", str(ORACLE)], capture_output=True, check=True, timeout=300)
    rows = [line.split(b"\t") for line in done.stdout.splitlines()]
    return [OracleCase(name.decode(), envelope, plain) for name, envelope, plain in rows]
