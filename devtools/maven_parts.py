"""JVM parts from Maven Central, installed by the project's own pinned files: the one installer of every bundle
(the bundles and the command line: devtools/maven_dist.py).

A bundle is a folder of the venv (`.venv/<name>`) made of parts; a part is a pom (and, where the pom holds several,
a profile) whose resolved jars land in one sub-folder, pinned by a lock file beside the pom that lists the SHA-256
of every jar it resolves to. `install` runs Maven's `dependency:copy-dependencies` per part (downloads cached in
Maven's local repository and checked against Central's own checksums), checks the jars against the lock (a jar
missing, extra or different fails, naming it) and only then moves the whole bundle into place, marked `.installed`.
`lock` rewrites the lock files after a version change in a pom.

    python -m devtools.maven_dist install debezium [--into DIR]   # what `make venv` runs per bundle
    python -m devtools.maven_dist lock debezium
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

JVM_DIR = Path(__file__).resolve().parent / "jvm"


class MavenPartNotInstalled(RuntimeError):
    """A bundle's jars are not installed (or cannot be): the message says how to install them."""


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every jar in `folder`, by file name."""
    return {jar.name: hashlib.sha256(jar.read_bytes()).hexdigest() for jar in sorted(folder.glob("*.jar"))}


def mismatches(found: dict[str, str], expected: dict[str, str]) -> list[str]:
    """Each jar that is missing, not pinned or of another digest, named."""
    problems = [f"{name}: pinned, not resolved" for name in sorted(expected.keys() - found.keys())]
    problems += [f"{name}: resolved, not pinned" for name in sorted(found.keys() - expected.keys())]
    problems += [
        f"{name}: sha256 {found[name]}, pinned {expected[name]}"
        for name in sorted(found.keys() & expected.keys())
        if found[name] != expected[name]
    ]
    return problems


def read_lock(path: Path) -> dict[str, str]:
    """A lock file's digests by jar name (its rows: `<sha256>  <jar>`)."""
    rows = (row.split() for row in path.read_text().splitlines() if row.strip())
    return {name: digest for digest, name in rows}


def resolve(pom: Path, into: Path, profile: str | None = None) -> None:
    """Maven copies the pom's (profile's) jars and their runtime dependencies into `into`."""
    if shutil.which("mvn") is None:
        raise MavenPartNotInstalled(f"the jars of {pom} are installed by Maven (mvn), which is not on the PATH")
    command = ["mvn", "-q", "-B", "-Dstyle.color=never", "--strict-checksums", "-f", str(pom)]
    command += ["-P", profile] if profile else []
    command += ["dependency:copy-dependencies", f"-DoutputDirectory={into}", "-DincludeScope=runtime"]
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


@dataclass(frozen=True)
class Part:
    """The jars of `pom` (its `profile` if given) under `folder` of the bundle, pinned by `lock`."""

    folder: str
    pom: Path
    lock: Path
    profile: str | None = None

    def pinned(self) -> dict[str, str]:
        return read_lock(self.lock)


@dataclass(frozen=True)
class Bundle:
    """`.venv/<name>`: its parts, installed together. `what` names it in messages."""

    name: str
    what: str
    parts: tuple[Part, ...]

    def default_root(self) -> Path:
        return Path(sys.prefix) / self.name

    def installed(self, root: Path | None = None) -> Path:
        """The install folder, or MavenPartNotInstalled saying how to install it."""
        root = root or self.default_root()
        if not (root / ".installed").exists():
            raise MavenPartNotInstalled(
                f"{self.what} is not installed in {root}: run `make venv` "
                f"(or `{sys.executable} -m devtools.maven_dist install {self.name}`)"
            )
        return root

    def install(self, root: Path | None = None) -> Path:
        """Resolve each part, check it against its lock, then move the whole into `root` (the venv's by default)."""
        root = root or self.default_root()
        if (root / ".installed").exists():
            return root
        root.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{self.name}-"))
        try:
            for part in self.parts:
                resolve(part.pom, staging / part.folder, part.profile)
                problems = mismatches(digests(staging / part.folder), part.pinned())
                if problems:
                    raise RuntimeError(f"{self.what}: the jars differ from {part.lock}: " + "; ".join(problems))
            (staging / ".installed").touch()
            os.chmod(staging, 0o755)  # (made 0700 by mkdtemp)
            shutil.rmtree(root, ignore_errors=True)
            os.rename(staging, root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return root

    def lock(self) -> None:
        """Rewrite every part's lock from what Maven resolves now."""
        for part in self.parts:
            with tempfile.TemporaryDirectory() as staging:
                resolve(part.pom, Path(staging), part.profile)
                rows = [f"{digest}  {name}\n" for name, digest in digests(Path(staging)).items()]
            part.lock.write_text("".join(rows))
