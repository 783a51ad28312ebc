"""Apache Kafka's broker jars for the test world, installed from Maven Central by the project's own pinned files.

`devtools/kafka/pom.xml` pins each broker line's versions (profile `kafka-<line>`); `devtools/kafka/kafka-<line>.sha256`
pins the SHA-256 of every jar the line resolves to. `install(line)` runs Maven's `dependency:copy-dependencies` (its
downloads cached in Maven's local repository, ~/.m2 unless `-Dmaven.repo.local` says otherwise, and checked against
Central's own checksums), checks the jars against the pinned list (a jar missing, extra or different fails, naming
it), and only then moves them into `<venv>/kafka/<line>/libs`, where `libs_dir(line)` finds them.

    python -m devtools.kafka_dist install 3.9          # what `make venv` runs (and 4.1 for make test-kafka4)
    python -m devtools.kafka_dist lock 4.1             # rewrites the pinned list after a version change in the pom
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from devtools.kafka_broker import write_class_archive
from devtools.kafka_lines import LINES, KafkaNotInstalled, class_archive, install_root
from devtools.maven_parts import digests, mismatches, read_lock

KAFKA_DIR = Path(__file__).resolve().parent / "kafka"
POM = KAFKA_DIR / "pom.xml"


def lock_file(line: str) -> Path:
    return KAFKA_DIR / f"kafka-{line}.sha256"


def pinned(line: str) -> dict[str, str]:
    return read_lock(lock_file(line))


def resolve(line: str, into: Path) -> None:
    """Maven copies the line's jars and their runtime dependencies into `into`."""
    command = ["mvn", "-q", "-B", "-Dstyle.color=never", "--strict-checksums", "-f", str(POM), "-P", f"kafka-{line}"]
    command += ["dependency:copy-dependencies", f"-DoutputDirectory={into}", "-DincludeScope=runtime"]
    if shutil.which("mvn") is None:
        raise KafkaNotInstalled(f"Apache Kafka {line} is installed by Maven (mvn), which is not on the PATH")
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


def install(line: str) -> Path:
    """Resolve, check against the pinned digests, then move into place; returns the install folder."""
    target = install_root() / line
    if (target / ".installed").exists():
        return _with_class_archive(line, target)
    install_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=install_root(), prefix=f".{line}-") as staging:
        libs = Path(staging) / "libs"
        resolve(line, libs)
        problems = mismatches(digests(libs), pinned(line))
        if problems:
            raise RuntimeError(f"Apache Kafka {line}: the jars differ from {lock_file(line)}: " + "; ".join(problems))
        shutil.rmtree(target, ignore_errors=True)
        (Path(staging) / ".installed").touch()
        os.chmod(staging, 0o755)  # (made 0700 by mkdtemp)
        os.rename(staging, target)
        os.mkdir(staging)  # for the TemporaryDirectory's own clean-up
    return _with_class_archive(line, target)


def _with_class_archive(line: str, target: Path) -> Path:
    """Write the line's JVM class archive when missing (kafka_broker.write_class_archive); returns `target`."""
    if not class_archive(line).exists():
        write_class_archive(line)
    return target


def lock(line: str) -> None:
    """Rewrite the pinned digests of `line` from what Maven resolves now."""
    with tempfile.TemporaryDirectory() as staging:
        resolve(line, Path(staging))
        rows = [f"{digest}  {name}\n" for name, digest in digests(Path(staging)).items()]
    lock_file(line).write_text("".join(rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.kafka_dist", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("install", "lock"))
    parser.add_argument("lines", nargs="+", choices=LINES)
    args = parser.parse_args(argv)
    for line in args.lines:
        if args.action == "install":
            print(install(line))
        else:
            lock(line)
            print(lock_file(line))


if __name__ == "__main__":
    main()
