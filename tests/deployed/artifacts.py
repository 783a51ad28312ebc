"""The deployed artifacts built for this machine, with the recipe of `make package` (`infra.packaging`), and laid
out as the services that run them do.

`Artifacts(root)` builds each piece the first time it is asked for, under `root`, and keeps it: the job archive
(the slow part, a minute or so), each function's code folder and layers, and a stand-in for the Lambda runtime's
own boto3/botocore. tests/deployed/conftest.py holds one per pytest session (fixture `artifacts`).

The target is this machine's Python (3.11 here, as on EMR) and architecture; the deployed targets (EMR Python
3.11 and Lambda Python 3.14 on ARM64) get the same recipe from `make package`.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from infra import packaging

LOCAL_TARGET = packaging.Target(
    f"{sys.version_info.major}.{sys.version_info.minor}",
    {"x86_64": "X86_64", "aarch64": "ARM64", "arm64": "ARM64"}[platform.machine()],
)
# The interpreter outside any venv: the archive's bin/python links to it (as to /usr/bin/python3.11 on EMR) and
# Lambda functions run with it (`python -S`, see lambda_runner).
BASE_PYTHON = str(Path(sys._base_executable).resolve())


@dataclass(frozen=True)
class LambdaLayout:
    """One function as Lambda lays it out: `task` (/var/task, its code folder), `opt` (/opt, its layers merged in
    order: libraries under `opt/python`), and `runtime` (what the runtime itself brings: boto3 and botocore)."""

    function: str
    task: Path
    opt: Path
    runtime: Path

    @property
    def handler(self) -> str:
        return f"lambdas.{self.function}.handler.handler"

    @property
    def python_path(self) -> list[Path]:
        """The function's import path in Lambda's order (task, layers, runtime)."""
        return [self.task, self.opt / "python", self.runtime]

    def unzipped_bytes(self) -> int:
        """Code and layers, as Lambda counts them against its 250 MB unzipped limit (the runtime is not counted)."""
        return packaging.folder_size(self.task) + packaging.folder_size(self.opt)


class Artifacts:
    """The artifacts of `target` under `root`, each built on first use and kept (see the module docstring)."""

    def __init__(self, root: Path, target: packaging.Target = LOCAL_TARGET, interpreter: str = BASE_PYTHON):
        self.root, self.target, self.interpreter = root, target, interpreter
        self._build = root / "build"
        self._layouts: dict[str, LambdaLayout] = {}
        self._layers: dict[str, Path] = {}

    @cached_property
    def job_archive(self) -> Path:
        """The job archive (`packaging.build_job_archive`), its `bin/python` linking to `interpreter`."""
        return packaging.build_job_archive(self.target, self.interpreter, self._build)

    def lambda_layout(self, function: str) -> LambdaLayout:
        """Function `function` (a key of `packaging.FUNCTIONS`) laid out as Lambda does."""
        if function not in self._layouts:
            package = packaging.FUNCTIONS[function]
            folder = self.root / "lambda" / function
            task, opt = folder / "task", folder / "opt"
            shutil.copytree(packaging.assemble_code(function, self._build, package.packages), task)
            opt.mkdir(parents=True)
            for name in package.layers:  # later layers overwrite earlier ones, as Lambda extracts them
                shutil.copytree(self._layer(name), opt, dirs_exist_ok=True)
            self._layouts[function] = LambdaLayout(function, task, opt, self.runtime)
        return self._layouts[function]

    @cached_property
    def runtime(self) -> Path:
        """boto3 and botocore at the versions `requirements.txt` pins, standing in for the Lambda runtime's."""
        folder = self.root / "lambda-runtime"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-compile",
                "--target",
                str(folder),
                *self.target.pip_args(),
                "-c",
                str(packaging.ROOT / "requirements.txt"),
                "boto3",
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pip could not install boto3 into {folder}: {done.stderr[-2000:]}")
        return folder

    def _layer(self, name: str) -> Path:
        if name not in self._layers:
            self._layers[name] = packaging.build_lambda_layer(name, self._build, self.target)
        return self._layers[name]
