"""Kafka Connect's worker and Debezium's Postgres connector for the CDC end-to-end test, installed from Maven Central
by the project's own pinned files.

`devtools/debezium/pom.xml` pins the versions (profile `connect`: connect-runtime at the test broker's line;
`debezium-postgres`: the connector without Kafka's jars); `devtools/debezium/<part>.sha256` pins the SHA-256 of every
jar each resolves to, checked as devtools/kafka_dist.py checks the broker's. `install()` puts the worker's jars in
`<venv>/debezium/connect/libs` and the connector's in `<venv>/debezium/plugins/debezium-connector-postgres`, a folder
of the worker's `plugin.path` (Connect loads a plugin's jars in a class loader of their own).

    python -m devtools.debezium_dist install     # what `make venv` runs (make debezium)
    python -m devtools.debezium_dist lock        # rewrites the pinned lists after a version change in the pom
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from devtools.kafka_dist import digests, mismatches

DEBEZIUM_DIR = Path(__file__).resolve().parent / "debezium"
POM = DEBEZIUM_DIR / "pom.xml"
PARTS = {"connect": "connect/libs", "debezium-postgres": "plugins/debezium-connector-postgres"}


class DebeziumNotInstalled(RuntimeError):
    """Connect or Debezium's jars are not installed: the message says how to install them."""


def install_root() -> Path:
    return Path(sys.prefix) / "debezium"


def installed() -> Path:
    """The install folder (`connect/libs`, `plugins/`), or DebeziumNotInstalled."""
    root = install_root()
    if not (root / ".installed").exists():
        raise DebeziumNotInstalled(
            f"Kafka Connect and Debezium are not installed in {root}: run `make venv` "
            f"(or `{sys.executable} -m devtools.debezium_dist install`)"
        )
    return root


def lock_file(part: str) -> Path:
    return DEBEZIUM_DIR / f"{part}.sha256"


def pinned(part: str) -> dict[str, str]:
    rows = (row.split() for row in lock_file(part).read_text().splitlines() if row.strip())
    return {name: digest for digest, name in rows}


def resolve(part: str, into: Path) -> None:
    """Maven copies the part's jars and their runtime dependencies into `into`."""
    if shutil.which("mvn") is None:
        raise DebeziumNotInstalled("Kafka Connect and Debezium are installed by Maven (mvn), which is not on the PATH")
    command = ["mvn", "-q", "-B", "-Dstyle.color=never", "--strict-checksums", "-f", str(POM), "-P", part]
    command += ["dependency:copy-dependencies", f"-DoutputDirectory={into}", "-DincludeScope=runtime"]
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


def install() -> Path:
    """Resolve each part, check it against its pinned digests, then move the whole into place."""
    root = install_root()
    if (root / ".installed").exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root.parent, prefix=".debezium-"))
    try:
        for part, folder in PARTS.items():
            resolve(part, staging / folder)
            problems = mismatches(digests(staging / folder), pinned(part))
            if problems:
                raise RuntimeError(f"{part}: the jars differ from {lock_file(part)}: " + "; ".join(problems))
        (staging / ".installed").touch()
        os.chmod(staging, 0o755)  # (made 0700 by mkdtemp)
        shutil.rmtree(root, ignore_errors=True)
        os.rename(staging, root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def lock() -> None:
    """Rewrite every part's pinned digests from what Maven resolves now."""
    for part in PARTS:
        with tempfile.TemporaryDirectory() as staging:
            resolve(part, Path(staging))
            rows = [f"{digest}  {name}\n" for name, digest in digests(Path(staging)).items()]
        lock_file(part).write_text("".join(rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.debezium_dist", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("install", "lock"))
    args = parser.parse_args(argv)
    if args.action == "install":
        print(install())
    else:
        lock()
        print(DEBEZIUM_DIR)


if __name__ == "__main__":
    main()
