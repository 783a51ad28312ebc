"""Run a sink job as EMR Serverless runs a StartJobRun request, with the development venv's pyspark standing in
for the EMR image's Spark.

`run_job_run(job_run, s3, workdir, aws)` takes the request as moto's server stores it (`get_job_run(...)["jobRun"]`:
`jobDriver.sparkSubmit.entryPoint`, `entryPointArguments`, `sparkSubmitParameters`, `configurationOverrides`) and:
- downloads the entry point and every `spark.archives` entry from S3 into `workdir` (the driver's working
  directory), unpacking each archive under its `#alias` as Spark does: only `.tar.gz`, `.tgz`, `.tar`, `.zip` and
  `.jar` are unpacked, anything else is copied as it is (so `./environment/bin/python` exists only then);
- turns `spark.emr-serverless.driverEnv.X=v` into the driver's environment and passes every other `--conf` on
  (`spark-defaults` properties of `configurationOverrides` first, `sparkSubmitParameters` winning);
- starts `.venv/bin/spark-submit --master local[2]` there: the driver's Python is whatever the request names
  (the archive's `./environment/bin/python`); nothing of the development venv is on its path, only pyspark and
  py4j from spark-submit's own PYTHONPATH, as on EMR. `aws` (credentials, AWS_ENDPOINT_URL of moto's server)
  stands in for the job role's credentials and the network path.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

ARCHIVE_ALIAS = "environment"
SPARK_UNPACKS = (".tar.gz", ".tgz", ".tar", ".zip", ".jar")  # Spark 3.5 Utils.unpack; anything else is copied
DRIVER_ENV = "spark.emr-serverless.driverEnv."
# What stands in for the EMR image: local Spark with two task slots, bound to loopback, no UI.
LOCAL_SPARK = ("--master", "local[2]", "--conf", "spark.ui.enabled=false")


@dataclass(frozen=True)
class JobRunResult:
    returncode: int
    stdout: str
    stderr: str


def sink_job_parameters(archive_uri: str, region: str) -> str:
    """The `sparkSubmitParameters` SinkJob (infra/constructs/emr_job.py) synthesizes for a job archive at
    `archive_uri` (tests/infra checks that the synthesized ones are these)."""
    interpreter = f"./{ARCHIVE_ALIAS}/bin/python"
    return " ".join([
        f"--conf spark.archives={archive_uri}#{ARCHIVE_ALIAS}",
        f"--conf spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON={interpreter}",
        f"--conf spark.emr-serverless.driverEnv.PYSPARK_PYTHON={interpreter}",
        f"--conf spark.executorEnv.PYSPARK_PYTHON={interpreter}",
        f"--conf spark.emr-serverless.driverEnv.AWS_REGION={region}",
        f"--conf spark.executorEnv.AWS_REGION={region}",
        "--conf spark.emr-serverless.driverEnv.SINK_METRICS=cloudwatch",
    ])


def spark_confs(job_run: Mapping) -> dict[str, str]:
    """Every Spark property of the request: `spark-defaults` of `configurationOverrides`, then the
    `--conf`s of `sparkSubmitParameters`. Raises ValueError naming an option or classification this stand-in
    does not reproduce (rather than ignoring it)."""
    confs: dict[str, str] = {}
    for item in job_run.get("configurationOverrides", {}).get("applicationConfiguration", []):
        if item["classification"] != "spark-defaults":
            raise ValueError(f"configurationOverrides classification {item['classification']!r} is not reproduced")
        confs.update(item.get("properties", {}))
    words = shlex.split(job_run["jobDriver"]["sparkSubmit"].get("sparkSubmitParameters", ""))
    if len(words) % 2:
        raise ValueError(f"sparkSubmitParameters ends with a lone {words[-1]!r}")
    for option, value in zip(words[::2], words[1::2]):
        if option != "--conf" or "=" not in value:
            raise ValueError(f"sparkSubmitParameters option {option} {value} is not reproduced (only --conf k=v)")
        key, _, conf = value.partition("=")
        confs[key] = conf  # a --conf wins over spark-defaults, as spark-submit's over spark-defaults.conf
    return confs


def run_job_run(job_run: Mapping, s3, workdir: Path, aws: Mapping[str, str], timeout_s: int = 600) -> JobRunResult:
    """Run `job_run` (see the module docstring) in the empty folder `workdir`; returns spark-submit's exit code
    and output."""
    driver = job_run["jobDriver"]["sparkSubmit"]
    confs = spark_confs(job_run)
    for entry in filter(None, confs.pop("spark.archives", "").split(",")):
        localize_archive(s3, entry.strip(), workdir)
    entry_point = _download(s3, driver["entryPoint"], workdir / Path(driver["entryPoint"]).name)
    driver_env = {k[len(DRIVER_ENV):]: v for k, v in confs.items() if k.startswith(DRIVER_ENV)}
    remote = sorted(k for k, v in confs.items() if "s3://" in v)
    if remote:
        raise ValueError(f"Spark properties {remote} name S3 objects, which local Spark cannot read")
    command = [str(Path(sys.executable).parent / "spark-submit"), *LOCAL_SPARK,
               *(arg for k, v in confs.items() if not k.startswith(DRIVER_ENV) for arg in ("--conf", f"{k}={v}")),
               str(entry_point), *driver.get("entryPointArguments", [])]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout_s,
                          env={**_spark_env(), **aws, **driver_env})
    return JobRunResult(done.returncode, done.stdout, done.stderr)


def localize_archive(s3, entry: str, workdir: Path) -> Path:
    """Download `uri[#alias]` into `workdir` and unpack it under `alias` as Spark does (copied as it is when its
    name has no extension Spark unpacks); returns `workdir/alias`."""
    uri, _, alias = entry.partition("#")
    name = uri.rsplit("/", 1)[-1]
    into = workdir / (alias or name)
    downloaded = _download(s3, uri, workdir / ".archives" / name)
    lower = name.lower()
    if not lower.endswith(SPARK_UNPACKS):
        shutil.copy2(downloaded, into)
    elif lower.endswith((".zip", ".jar")):
        with zipfile.ZipFile(downloaded) as archive:
            archive.extractall(into)
    else:
        with tarfile.open(downloaded) as tar:
            tar.extractall(into, filter="tar")
    return into


def _download(s3, uri: str, into: Path) -> Path:
    if not uri.startswith("s3://"):
        raise ValueError(f"{uri} is not an s3:// URI (EMR Serverless reads the job's files from S3)")
    bucket, _, key = uri[len("s3://"):].partition("/")
    into.parent.mkdir(parents=True, exist_ok=True)
    s3.download_file(bucket, key, str(into))
    return into


def _spark_env() -> dict[str, str]:
    """The JVM's environment: Java, SPARK_HOME (the venv's pyspark), loopback; no PYTHONPATH or venv."""
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("java is not on PATH: spark-submit needs Java 17")
    spark_home = Path(importlib.util.find_spec("pyspark").origin).parent
    env = {"PATH": f"{Path(java).resolve().parent}:/usr/bin:/bin", "SPARK_HOME": str(spark_home),
           "SPARK_LOCAL_IP": "127.0.0.1", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return env


def upload_asset(s3, bucket: str, path: Path) -> str:
    """Put `path` into `bucket` as CDK publishes a file asset (a content hash and the file's *last* extension
    only, as node's path.extname: `x.tar.gz` -> `<hash>.gz`); returns its s3:// URI."""
    key = hashlib.sha256(path.read_bytes()).hexdigest() + path.suffix
    s3.upload_file(str(path), bucket, key)
    return f"s3://{bucket}/{key}"
