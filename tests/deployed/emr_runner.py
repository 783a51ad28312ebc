"""Run a sink job as EMR Serverless runs a StartJobRun request, with the development venv's pyspark standing in
for the EMR image's Spark.

`run_job_run(job_run, s3, workdir, aws)` takes the request as moto's server stores it (`get_job_run(...)["jobRun"]`:
`jobDriver.sparkSubmit.entryPoint`, `entryPointArguments`, `sparkSubmitParameters`, `configurationOverrides`) and:
- downloads the entry point and every `spark.archives` entry from S3 into `workdir` (the driver's working
  directory), unpacking each archive under its `#alias` as Spark does: only `.tar.gz`, `.tgz`, `.tar`, `.zip` and
  `.jar` are unpacked, anything else is copied as it is (so `./environment/bin/python` exists only then);
- turns `spark.emr-serverless.driverEnv.X=v` into the driver's environment and passes every other `--conf` on
  (`spark-defaults` properties of `configurationOverrides` first, `sparkSubmitParameters` winning);
- starts `.venv/bin/spark-submit --master <master>` there: the driver's Python is whatever the request names
  (the archive's `./environment/bin/python`); nothing of the development venv is on its path, only pyspark and
  py4j from spark-submit's own PYTHONPATH, as on EMR. `aws` (credentials, AWS_ENDPOINT_URL of moto's server)
  stands in for the job role's credentials and the network path: the driver's environment, and each executor's
  through `spark.executorEnv.*` (on EMR the executors get both from their container, not from the driver).
- On a master whose executors are other processes (a `StandaloneCluster` of tests/spark_cluster.py, whose workers
  have no environment of the test's), every `spark.archives` entry goes to spark-submit as the downloaded local
  file, so that Spark ships it and each executor unpacks it in its own working directory, as on EMR; executors
  see the request's `spark.executorEnv.*` and nothing else of the driver.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.spark_cluster import spark_env, spark_submit_command

ARCHIVE_ALIAS = "environment"
SPARK_UNPACKS = (".tar.gz", ".tgz", ".tar", ".zip", ".jar")  # Spark 3.5 Utils.unpack; anything else is copied
DRIVER_ENV = "spark.emr-serverless.driverEnv."
EXECUTOR_ENV = "spark.executorEnv."
# What stands in for the EMR image by default: local Spark with two task slots (tasks in the driver's process).
LOCAL_MASTER = "local[2]"


@dataclass(frozen=True)
class JobRunResult:
    returncode: int
    stdout: str
    stderr: str


def sink_job_parameters(archive_uri: str, region: str, cluster_arn: str) -> str:
    """The `sparkSubmitParameters` SinkJob (infra/constructs/emr_job.py) synthesizes for a job archive at
    `archive_uri` and the environment's MSK cluster (tests/infra checks that the synthesized ones are these)."""
    interpreter = f"./{ARCHIVE_ALIAS}/bin/python"
    return " ".join(
        [
            f"--conf spark.archives={archive_uri}#{ARCHIVE_ALIAS}",
            f"--conf spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON={interpreter}",
            f"--conf spark.emr-serverless.driverEnv.PYSPARK_PYTHON={interpreter}",
            f"--conf spark.executorEnv.PYSPARK_PYTHON={interpreter}",
            f"--conf spark.emr-serverless.driverEnv.AWS_REGION={region}",
            f"--conf spark.executorEnv.AWS_REGION={region}",
            "--conf spark.emr-serverless.driverEnv.SINK_METRICS=cloudwatch",
            "--conf spark.emr-serverless.driverEnv.SINK_BUCKET_MANAGED=true",
            f"--conf spark.emr-serverless.driverEnv.SINK_MSK_CLUSTER_ARN={cluster_arn}",
        ]
    )


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


def run_job_run(
    job_run: Mapping,
    s3,
    workdir: Path,
    aws: Mapping[str, str],
    timeout_s: int = 600,
    master: str = LOCAL_MASTER,
    event_log_dir: Path | None = None,
) -> JobRunResult:
    """Run `job_run` (see the module docstring) in the empty folder `workdir` on `master`, Spark's event log in
    `event_log_dir` when given; returns spark-submit's exit code and output."""
    command, env = job_run_command(job_run, s3, workdir, aws, master, event_log_dir)
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout_s, env=env)
    return JobRunResult(done.returncode, done.stdout, done.stderr)


def start_job_run(
    job_run: Mapping,
    s3,
    workdir: Path,
    aws: Mapping[str, str],
    master: str = LOCAL_MASTER,
    event_log_dir: Path | None = None,
) -> subprocess.Popen:
    """`run_job_run` without waiting: the spark-submit process (output to pipes), for a run that does not end by
    itself (a STREAMING job run of `run --continuous`, stopped by a signal)."""
    command, env = job_run_command(job_run, s3, workdir, aws, master, event_log_dir)
    return subprocess.Popen(command, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def job_run_command(
    job_run: Mapping,
    s3,
    workdir: Path,
    aws: Mapping[str, str],
    master: str = LOCAL_MASTER,
    event_log_dir: Path | None = None,
) -> tuple[list[str], dict[str, str]]:
    """spark-submit's command line and environment for `job_run`, its files fetched into `workdir`."""
    driver = job_run["jobDriver"]["sparkSubmit"]
    confs = spark_confs(job_run)
    shipped = [
        _shipped(s3, entry.strip(), workdir) for entry in filter(None, confs.pop("spark.archives", "").split(","))
    ]
    if shipped:
        confs["spark.archives"] = ",".join(shipped)  # the downloaded files: Spark ships them to the executors
    entry_point = _download(s3, driver["entryPoint"], workdir / Path(driver["entryPoint"]).name)
    driver_env = {k[len(DRIVER_ENV) :]: v for k, v in confs.items() if k.startswith(DRIVER_ENV)}
    remote = sorted(k for k, v in confs.items() if "s3://" in v)
    if remote:
        raise ValueError(f"Spark properties {remote} name S3 objects, which local Spark cannot read")
    settings = {
        **{k: v for k, v in confs.items() if not k.startswith(DRIVER_ENV)},
        **{f"{EXECUTOR_ENV}{k}": v for k, v in aws.items()},
    }
    command = spark_submit_command(
        master, entry_point, list(driver.get("entryPointArguments", [])), event_log_dir, settings
    )
    if event_log_dir is not None:
        event_log_dir.mkdir(parents=True, exist_ok=True)
    return command, {**spark_env(), **aws, **driver_env}


def _shipped(s3, entry: str, workdir: Path) -> str:
    """`entry` (`uri[#alias]`) localized for the driver, as the local file Spark ships to the executors."""
    _, downloaded = localize_archive(s3, entry, workdir)
    alias = entry.partition("#")[2]
    return downloaded.as_uri() + (f"#{alias}" if alias else "")


def localize_archive(s3, entry: str, workdir: Path) -> tuple[Path, Path]:
    """Download `uri[#alias]` into `workdir` and unpack it under `alias` as Spark does (copied as it is when its
    name has no extension Spark unpacks); returns `workdir/alias` and the downloaded file."""
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
    return into, downloaded


def _download(s3, uri: str, into: Path) -> Path:
    if not uri.startswith("s3://"):
        raise ValueError(f"{uri} is not an s3:// URI (EMR Serverless reads the job's files from S3)")
    bucket, _, key = uri[len("s3://") :].partition("/")
    into.parent.mkdir(parents=True, exist_ok=True)
    s3.download_file(bucket, key, str(into))
    return into


def upload_asset(s3, bucket: str, path: Path) -> str:
    """Put `path` into `bucket` as CDK publishes a file asset (a content hash and the file's *last* extension
    only, as node's path.extname: `x.tar.gz` -> `<hash>.gz`); returns its s3:// URI."""
    key = hashlib.sha256(path.read_bytes()).hexdigest() + path.suffix
    s3.upload_file(str(path), bucket, key)
    return f"s3://{bucket}/{key}"
