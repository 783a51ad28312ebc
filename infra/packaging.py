"""Build artifacts without Docker, from manylinux wheels for the target Python and architecture.

- The job archive: a virtual environment laid out as venv-pack does (`bin/python` linking to the EMR image's
  interpreter, `pyvenv.cfg`, `lib/pythonX.Y/site-packages` with the engine, `requirements.txt` and
  `requirements-columnar.txt`), packed as a reproducible `.tgz`. Spark unpacks it as
  `./environment` through `spark.archives`.
- The Lambda layers (LAYERS): `python/` with the libraries of a requirements file, installed `--no-deps`:
  `libraries` (`lambdas/requirements.txt`: Powertools and its tracer, for every function) and `replay`
  (`lambdas/dlq_replay/requirements.txt`: the engine libraries the DLQ replay imports, pinned by
  `requirements.txt`). boto3 and botocore come with the Lambda runtime.
- The Lambda code folders (FUNCTIONS): `lambdas/<function>/` and the other packages and modules the function
  runs.

`python -m infra.packaging` (what `make package` runs) builds them all for every environment's target.
"""

from __future__ import annotations

import argparse
import gzip
import io
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from infra.errors import PackagingError

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
LAMBDA_PYTHON = "3.14"
LAMBDA_ARCHITECTURE = "ARM64"
LAYERS = {  # layer name -> requirements file
    "libraries": ROOT / "lambdas" / "requirements.txt",
    "replay": ROOT / "lambdas" / "dlq_replay" / "requirements.txt",
}


@dataclass(frozen=True)
class LambdaPackage:
    """What one function is deployed with: `packages` in its code folder (besides `lambdas/<function>`; folders
    or lone modules of the repository, copied to the same path: `sink_engine`, `lambdas/shared`,
    `sink_engine/offsets/layout.py`, whose folders are then namespace packages) and its `layers` (keys of LAYERS),
    in the order Lambda merges them under /opt."""

    packages: tuple[str, ...] = ()
    layers: tuple[str, ...] = ("libraries",)


FUNCTIONS = {  # handler `lambdas.<function>.handler.handler` -> what the stack deploys it with
    "admin": LambdaPackage(),
    # the custom resource that stops the EMR application before an update; answers with the admin's cfn module
    "app_stop": LambdaPackage(packages=("lambdas/admin/cfn.py",)),
    # the connector index reader; the table's items; the engine's time zones and rotation boundaries
    "trigger": LambdaPackage(
        packages=(
            "lambdas/shared",
            "sink_engine/offsets/layout.py",
            "sink_engine/errors.py",
            "sink_engine/partition/java_zone_ids.py",
            "sink_engine/partition/time_buckets.py",
        )
    ),
    # the replay is the engine's (`sink_engine.dlq.replay`); the connector index reader
    "dlq_replay": LambdaPackage(packages=("sink_engine", "lambdas/shared"), layers=("libraries", "replay")),
}
_MACHINE = {"ARM64": "aarch64", "X86_64": "x86_64"}
_MANYLINUX = ("manylinux2014", "manylinux_2_28")  # glibc 2.17 and 2.28; Amazon Linux 2023 has 2.34


@dataclass(frozen=True)
class Target:
    """Where the artifact runs: CPython version ("3.11") and architecture ("ARM64" or "X86_64")."""

    python: str
    architecture: str

    @property
    def tag(self) -> str:
        return f"py{self.python.replace('.', '')}-{self.architecture.lower()}"

    def pip_args(self) -> list[str]:
        machine = _MACHINE[self.architecture]
        platforms = [arg for tag in _MANYLINUX for arg in ("--platform", f"{tag}_{machine}")]
        return [*platforms, "--python-version", self.python, "--implementation", "cp", "--only-binary=:all:"]


def job_archive_path(target: Target, build: Path = BUILD) -> Path:
    """The job archive built for `target`. `.tgz`: CDK keeps only a file asset's last extension in its S3 key, and
    Spark unpacks only `.tar.gz`, `.tgz`, `.tar`, `.zip` and `.jar` (`x.tar.gz` would become `<hash>.gz`, copied
    as it is, and `./environment/bin/python` would not exist)."""
    return build / "job" / f"sink-engine-env-{target.tag}.tgz"


LAMBDA_TARGET = Target(LAMBDA_PYTHON, LAMBDA_ARCHITECTURE)


def lambda_layer_path(name: str = "libraries", build: Path = BUILD, target: Target = LAMBDA_TARGET) -> Path:
    """The folder of layer `name` (a key of LAYERS) built for `target`."""
    return build / "lambda" / f"layer-{name}-{target.tag}"


def build_job_archive(target: Target, interpreter: str, build: Path = BUILD) -> Path:
    """Build the job archive for `target`, its `bin/python` linking to `interpreter`; returns its path."""
    staging = build / "job" / f"staging-{target.tag}"
    shutil.rmtree(staging, ignore_errors=True)
    site = staging / "lib" / f"python{target.python}" / "site-packages"
    _pip_install(target, site, ["-r", str(ROOT / "requirements.txt")])
    _pip_install(target, site, ["--no-deps", "-r", str(ROOT / "requirements-columnar.txt")])
    shutil.copytree(ROOT / "sink_engine", site / "sink_engine", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (staging / "bin").mkdir()
    (staging / "bin" / "python").symlink_to(interpreter)
    (staging / "bin" / "python3").symlink_to("python")
    (staging / "pyvenv.cfg").write_text(
        f"home = {Path(interpreter).parent}\ninclude-system-site-packages = false\nversion = {target.python}\n"
    )
    archive = job_archive_path(target, build)
    _write_tar(staging, archive)
    shutil.rmtree(staging)
    return archive


def build_lambda_layer(name: str = "libraries", build: Path = BUILD, target: Target = LAMBDA_TARGET) -> Path:
    """Build the folder (`python/...`) of layer `name` (a key of LAYERS) for `target`; returns its path."""
    layer = lambda_layer_path(name, build, target)
    shutil.rmtree(layer, ignore_errors=True)
    _pip_install(target, layer / "python", ["--no-deps", "-r", str(LAYERS[name])])
    return layer


def assemble_code(function: str, build: Path = BUILD, packages: tuple[str, ...] = ()) -> Path:
    """Copy `lambdas/__init__.py`, `lambdas/<function>/` and the repository's `packages` (folders such as
    "sink_engine", "lambdas/shared", or modules) into a folder of their own, `build/lambda/code-<function>`;
    returns the folder."""
    target = build / "lambda" / f"code-{function}"
    shutil.rmtree(target, ignore_errors=True)
    (target / "lambdas").mkdir(parents=True)
    shutil.copy2(ROOT / "lambdas" / "__init__.py", target / "lambdas" / "__init__.py")
    for source in (f"lambdas/{function}", *packages):
        if (ROOT / source).is_file():
            (target / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / source, target / source)
        else:
            shutil.copytree(ROOT / source, target / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def folder_size(folder: Path) -> int:
    """Bytes of the files under `folder` (what counts toward Lambda's unzipped size limit)."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _pip_install(target: Target, into: Path, requirements: list[str]) -> None:
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-compile",
        "--target",
        str(into),
        *target.pip_args(),
        *requirements,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise PackagingError(f"pip could not install {requirements} for {target}: {done.stderr.strip()[-2000:]}")
    for junk in into.glob("bin"):
        shutil.rmtree(junk)


def _write_tar(folder: Path, archive: Path) -> None:
    """Pack `folder`'s contents with sorted names, zero mtimes and no owners, so equal inputs give equal bytes.
    Written under a temporary name and renamed once whole: a build killed midway leaves no archive."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(folder)))
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    partial = archive.with_name(archive.name + ".partial")
    with partial.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(buffer.getvalue())
    partial.replace(archive)


def main(argv: list[str] | None = None) -> int:
    from infra.settings import ENVIRONMENTS_DIR, load_settings  # imports fastavro

    parser = argparse.ArgumentParser(prog="python -m infra.packaging", description=__doc__.splitlines()[0])
    parser.add_argument("--env", action="append", help="environment(s) to build for; default: all")
    args = parser.parse_args(argv)
    envs = args.env or sorted(p.stem for p in ENVIRONMENTS_DIR.glob("*.json"))
    targets = {}
    for env in envs:
        emr = load_settings(env).emr
        targets[Target(emr.python, emr.architecture)] = emr.interpreter
    for target, interpreter in sorted(targets.items(), key=lambda t: t[0].tag):
        archive = build_job_archive(target, interpreter)
        print(f"job archive {archive.relative_to(ROOT)}: {archive.stat().st_size / 1e6:.1f} MB")
    for name in LAYERS:
        layer = build_lambda_layer(name)
        print(f"lambda layer {layer.relative_to(ROOT)}: {folder_size(layer) / 1e6:.1f} MB")
    for function, package in FUNCTIONS.items():
        code = assemble_code(function, packages=package.packages)
        unzipped = folder_size(code) + sum(folder_size(lambda_layer_path(name)) for name in package.layers)
        print(
            f"lambda code {code.relative_to(ROOT)}: {folder_size(code) / 1e3:.0f} kB "
            f"({unzipped / 1e6:.1f} MB unzipped with its layers; Lambda's limit is 250 MB)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
