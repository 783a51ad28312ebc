"""Where the test world's Apache Kafka lines are installed and which one a process runs (`KAFKA_VERSION`):
what the broker (kafka_broker.py) and the installer (kafka_dist.py) share."""

from __future__ import annotations

import os
import sys
from pathlib import Path

LINES = ("3.9", "4.1")
DEFAULT_LINE = "3.9"  # make test's broker; KAFKA_VERSION=4.1 picks the other (make test-kafka4)


class KafkaNotInstalled(RuntimeError):
    """The broker jars of a line are not installed: the message says how to install them."""


def selected_line() -> str:
    """The broker line of this process: `KAFKA_VERSION` (a line of LINES) or the default."""
    line = os.environ.get("KAFKA_VERSION", DEFAULT_LINE)
    if line not in LINES:
        raise ValueError(f"KAFKA_VERSION={line!r} is not a broker line of devtools/kafka/pom.xml: one of {LINES}")
    return line


def install_root() -> Path:
    """Where installed lines live: the venv's `kafka/` folder (`make clean` removes it with the venv)."""
    return Path(sys.prefix) / "kafka"


def libs_dir(line: str) -> Path:
    """The installed jars of `line`, for `java -cp '<dir>/*'`."""
    libs = install_root() / line / "libs"
    if not (libs.parent / ".installed").exists():
        raise KafkaNotInstalled(
            f"Apache Kafka {line} is not installed in {libs.parent}: run `make venv` "
            f"(or `{sys.executable} -m devtools.kafka_dist install {line}`)"
        )
    return libs


def class_archive(line: str) -> Path:
    """The JVM class archive of the line's broker (kafka_broker.write_class_archive), beside its jars."""
    return install_root() / line / "classes.jsa"
