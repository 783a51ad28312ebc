"""The job archive holds everything the job needs: unpacked into an empty folder, its interpreter runs the job
entry point (`validate`) and imports every engine module and runtime dependency, with no other site-packages.
Likewise the DLQ replay Lambda's code folder and layers import its handler."""
import platform
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from infra import packaging

ROOT = Path(__file__).resolve().parents[2]
CONNECTOR = ROOT / "infra" / "connectors" / "dev" / "orders.json"
IMPORT_ALL = """
import importlib, pkgutil, sink_engine
for mod in pkgutil.walk_packages(sink_engine.__path__, "sink_engine."):
    if mod.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(mod.name)
    except ModuleNotFoundError as e:
        if e.name.split(".")[0] not in ("pyspark", "py4j"):  # Spark brings these on EMR
            raise
for dep in ("pyarrow", "pyarrow.parquet", "confluent_kafka", "orjson", "boto3", "aws_msk_iam_sasl_signer"):
    importlib.import_module(dep)
import sys; assert not any("/.venv/" in p for p in sys.path), sys.path
print("ALL-IMPORTED")
"""


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    """The archive built for this machine's Python and architecture, unpacked as Spark does (`#environment`)."""
    machine = {"x86_64": "X86_64", "aarch64": "ARM64"}[platform.machine()]
    target = packaging.Target(f"{sys.version_info.major}.{sys.version_info.minor}", machine)
    build = tmp_path_factory.mktemp("build")
    archive = packaging.build_job_archive(target, str(Path(sys._base_executable).resolve()), build)
    folder = tmp_path_factory.mktemp("empty") / "environment"
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="tar")
    shutil.rmtree(build)
    return folder


def test_archive_runs_the_job_entry_point(unpacked, tmp_path):
    done = subprocess.run([str(unpacked / "bin" / "python"), str(ROOT / "infra" / "job" / "entrypoint.py"),
                           "validate", "--config", str(CONNECTOR)], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "orders-s3-sink" in done.stdout and "flush.size" in done.stdout


def test_archive_holds_every_module_and_dependency(unpacked, tmp_path):
    done = subprocess.run([str(unpacked / "bin" / "python"), "-c", IMPORT_ALL], cwd=tmp_path,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "ALL-IMPORTED" in done.stdout



REPLAY_IMPORTS = """
import sys
import lambdas.dlq_replay.handler, sink_engine.dlq.replay, sink_engine.dlq.topic_destination
from aws_msk_iam_sasl_signer import MSKAuthTokenProvider  # imported when an MSK IAM token is needed
from confluent_kafka import Producer
Producer({"bootstrap.servers": "127.0.0.1:9", "enable.idempotence": True})
assert not any("/.venv/" in p or "site-packages" in p for p in sys.path), sys.path
assert "pyarrow" not in sys.modules and "fastavro" not in sys.modules
print("REPLAY-IMPORTED")
"""


def test_replay_code_and_layers_import_the_handler(tmp_path):
    """The replay function's code folder and layers, built for this machine's Python and architecture and laid out
    as Lambda does (code in the task folder, layers merged under /opt), import the handler and what replay uses
    later; the runtime's boto3 is stood in for by a folder of its own, and no other site-packages is on the path."""
    from infra.constructs.dlq_replay import PACKAGES
    from infra.constructs.lambda_function import assemble_code

    machine = {"x86_64": "X86_64", "aarch64": "ARM64"}[platform.machine()]
    target = packaging.Target(f"{sys.version_info.major}.{sys.version_info.minor}", machine)
    build, task, opt, runtime = (tmp_path / name for name in ("build", "task", "opt", "runtime"))
    shutil.copytree(assemble_code("dlq_replay", build, PACKAGES), task)
    for name in packaging.LAYERS:
        shutil.copytree(packaging.build_lambda_layer(name, build, target), opt, dirs_exist_ok=True)
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(runtime),
                          *target.pip_args(), "-c", str(ROOT / "requirements.txt"), "boto3"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    shutil.rmtree(build)
    done = subprocess.run([sys._base_executable, "-S", "-c", REPLAY_IMPORTS], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{task}:{opt / 'python'}:{runtime}",
                               "AWS_REGION": "eu-west-1", "POWERTOOLS_SERVICE_NAME": "sink-dlq-replay"})
    assert done.returncode == 0, done.stderr
    assert "REPLAY-IMPORTED" in done.stdout
