"""Iceberg's Java reader for the tests, installed from Maven Central by the project's own pinned files.

`devtools/jvm/iceberg-spark/pom.xml` pins the jars: Iceberg's Spark runtime for the project's pyspark, its AWS
bundle (S3FileIO, the Glue catalog) and the SQLite JDBC driver (the SQL catalog). `libs.sha256` beside it pins the
SHA-256 of each. `install()` runs Maven's `dependency:copy-dependencies` (downloads cached in Maven's local
repository and checked against Central's own checksums), checks the jars against the pinned list (devtools.kafka_dist's
check: a jar missing, extra or different fails, naming it) and only then moves them into `<venv>/iceberg-spark/libs`,
where `libs_dir()` finds them (tests/iceberg/spark_reader.py puts them on its Spark session's classpath).

    python -m devtools.iceberg_spark_dist install      # what `make venv` runs
    python -m devtools.iceberg_spark_dist lock         # rewrites the pinned list after a version change in the pom
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

POM_DIR = Path(__file__).resolve().parent / "jvm" / "iceberg-spark"
LOCK = POM_DIR / "libs.sha256"


class IcebergSparkNotInstalled(RuntimeError):
    """The reader's jars are not installed: the message says how to install them."""


def install_root() -> Path:
    """The venv's `iceberg-spark/` folder (`make clean` removes it with the venv)."""
    return Path(sys.prefix) / "iceberg-spark"


def libs_dir() -> Path:
    """The installed jars, for Spark's `spark.jars`."""
    libs = install_root() / "libs"
    if not (install_root() / ".installed").exists():
        raise IcebergSparkNotInstalled(
            f"Iceberg's Spark runtime is not installed in {install_root()}: run `make venv` "
            f"(or `{sys.executable} -m devtools.iceberg_spark_dist install`)"
        )
    return libs


def pinned() -> dict[str, str]:
    rows = (row.split() for row in LOCK.read_text().splitlines() if row.strip())
    return {name: digest for digest, name in rows}


def resolve(into: Path) -> None:
    """Maven copies the pom's jars (and their runtime dependencies: none, the three are shaded) into `into`."""
    if shutil.which("mvn") is None:
        raise IcebergSparkNotInstalled("Iceberg's Spark runtime is installed by Maven (mvn), which is not on the PATH")
    command = ["mvn", "-q", "-B", "-Dstyle.color=never", "--strict-checksums", "-f", str(POM_DIR / "pom.xml")]
    command += ["dependency:copy-dependencies", f"-DoutputDirectory={into}", "-DincludeScope=runtime"]
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


def install() -> Path:
    """Resolve, check against the pinned digests, then move into place; returns the install folder."""
    target = install_root()
    if (target / ".installed").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".iceberg-spark-") as staging:
        resolve(Path(staging) / "libs")
        problems = mismatches(digests(Path(staging) / "libs"), pinned())
        if problems:
            raise RuntimeError(f"Iceberg's Spark runtime: the jars differ from {LOCK}: " + "; ".join(problems))
        shutil.rmtree(target, ignore_errors=True)
        (Path(staging) / ".installed").touch()
        os.chmod(staging, 0o755)  # (made 0700 by mkdtemp)
        os.rename(staging, target)
        os.mkdir(staging)  # for the TemporaryDirectory's own clean-up
    return target


def lock() -> None:
    """Rewrite the pinned digests from what Maven resolves now."""
    with tempfile.TemporaryDirectory() as staging:
        resolve(Path(staging))
        LOCK.write_text("".join(f"{digest}  {name}\n" for name, digest in digests(Path(staging)).items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.iceberg_spark_dist", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("install", "lock"))
    args = parser.parse_args(argv)
    if args.action == "install":
        print(install())
    else:
        lock()
        print(LOCK)


if __name__ == "__main__":
    main()
