"""Where the job's interpreter comes from (`emr.interpreter`): with "image" the stack builds the application's image
from the release's EMR Serverless image with the interpreter the job archive's bin/python links to, in the
bootstrap's container asset repository (which lets EMR Serverless pull from bootstrap version 27); with "system"
the release's image is used as it is. The job's entry point refuses an interpreter that cannot run it, naming the
setting. Building the image and EMR pulling it cannot run here (no Docker, no AWS): docs/aws-fidelity.md."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
from aws_cdk import Environment, Stack
from aws_cdk import aws_kms as kms

from infra import packaging
from infra.application import new_app
from infra.connectors import load_connectors
from infra.constructs.emr_job import EMR_PULL_BOOTSTRAP_VERSION, IMAGE_DIR, SinkJob
from infra.errors import SettingsError
from infra.job.entrypoint import interpreter_problem
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from infra.stacks.connectors import ConnectorStacks
from tests.deployed.artifacts import BASE_PYTHON
from tests.infra.conftest import ensure_artifacts

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
DOCKERFILE = IMAGE_DIR / "Dockerfile"
BOOTSTRAP_TEMPLATE = (
    packaging.ROOT / "node_modules" / "aws-cdk" / "lib" / "api" / "bootstrap" / "bootstrap-template.yaml"
)
PLATFORMS = {"ARM64": "linux/arm64", "X86_64": "linux/amd64"}


def _settings(**emr):
    doc = copy.deepcopy(DEV)
    doc["emr"].update(emr)
    return parse_settings("dev", doc, "dev.json")


def _image_assets(synthesized) -> dict:
    """The service stack's Docker image assets, as `cdk deploy` reads them (its asset manifest)."""
    manifest = synthesized.outdir / f"{synthesized.deployment.service.stack_name}.assets.json"
    return json.loads(manifest.read_text()).get("dockerImages", {})


def _rendered_dockerfile(build_args: dict[str, str]) -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuation lines joined, comments dropped) with `build_args` put in for
    `${NAME}`, as `docker build --build-arg` would."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    rendered = [re.sub(r"\$\{(\w+)\}", lambda m: build_args[m[1]], line) for line in lines]
    return [tuple(line.split(None, 1)) for line in rendered]


def _archive_link(target: packaging.Target) -> str:
    """Where the deployed job archive's bin/python links to."""
    with tarfile.open(packaging.job_archive_path(target)) as tar:
        for member in tar:
            if member.name == "bin/python":
                return member.linkname
    raise AssertionError("the job archive has no bin/python")


# -- the image ----------------------------------------------------------------------------------------------------


def test_the_application_runs_the_image_built_from_the_job_dockerfile(each_env):
    # given an environment whose interpreter comes from the image
    emr = each_env.deployment.settings.emr
    assert emr.interpreter_source == "image"
    # then its one image asset is the job's Dockerfile, built for the release, the Python and the architecture
    ((asset_hash, image),) = _image_assets(each_env).items()
    assert (each_env.outdir / image["source"]["directory"] / "Dockerfile").read_bytes() == DOCKERFILE.read_bytes()
    assert image["source"]["dockerBuildArgs"] == {"RELEASE_LABEL": emr.release_label, "PYTHON_VERSION": emr.python}
    assert image["source"]["platform"] == PLATFORMS[emr.architecture]
    # and the application runs that image, from the bootstrap's container asset repository
    (destination,) = image["destinations"].values()
    (application,) = [
        r for r in each_env.templates["service"]["Resources"].values() if r["Type"] == "AWS::EMRServerless::Application"
    ]
    uri = application["Properties"]["ImageConfiguration"]["ImageUri"]["Fn::Sub"]
    settings = each_env.deployment.settings
    assert uri == (
        f"{settings.account}.dkr.ecr.{settings.region}.${{AWS::URLSuffix}}/"
        f"{destination['repositoryName']}:{destination['imageTag']}"
    )
    assert destination["imageTag"] == asset_hash
    assert destination["repositoryName"].startswith("cdk-") and "container-assets" in destination["repositoryName"]


def test_the_stack_refuses_a_bootstrap_whose_repository_emr_serverless_cannot_pull_from(each_env):
    rule = each_env.templates["service"]["Rules"]["CheckBootstrapVersionForEmrImage"]
    (assertion,) = rule["Assertions"]
    older, version = assertion["Assert"]["Fn::Not"][0]["Fn::Contains"]
    assert version == {"Ref": "BootstrapVersion"}  # CDK's own parameter: the bootstrap stack's SSM version
    assert older == [str(v) for v in range(1, EMR_PULL_BOOTSTRAP_VERSION)]
    assert "emr.interpreter" in assertion["AssertDescription"]


@pytest.mark.skipif(not BOOTSTRAP_TEMPLATE.is_file(), reason="the pinned CDK CLI is not installed (make cdk-cli)")
def test_the_pinned_cli_bootstraps_a_repository_emr_serverless_may_pull_from():
    # the bootstrap template `npx aws-cdk bootstrap` deploys, as package.json pins the CLI
    template = BOOTSTRAP_TEMPLATE.read_text()
    version = re.search(r"CdkBootstrapVersion:\n(?:\s+.*\n)*?\s+Value: '(\d+)'", template)
    assert int(version[1]) >= EMR_PULL_BOOTSTRAP_VERSION
    statement = template[template.index("Sid: EmrServerlessImageRetrievalPolicy") :].split("- Sid:")[0]
    assert "Service: emr-serverless.amazonaws.com" in statement
    for action in ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:DescribeImages"):
        assert f"- {action}" in statement
    assert ":emr-serverless:${AWS::Region}:${AWS::AccountId}:/applications/*" in statement


def test_the_dockerfile_starts_from_the_release_image_and_checks_the_archives_interpreter(each_env):
    emr = each_env.deployment.settings.emr
    instructions = _rendered_dockerfile({"RELEASE_LABEL": emr.release_label, "PYTHON_VERSION": emr.python})
    keywords = [keyword for keyword, _ in instructions]
    # FROM the release's EMR Serverless image (the build arguments the stack passes)
    (base,) = [value for keyword, value in instructions if keyword == "FROM"]
    assert base == f"public.ecr.aws/emr-serverless/spark/{emr.release_label}:latest"
    # installs and checks, as root, the interpreter the deployed job archive's bin/python links to
    (run,) = [value for keyword, value in instructions if keyword == "RUN"]
    link = _archive_link(packaging.Target(emr.python, emr.architecture))
    assert link == emr.interpreter == f"/usr/bin/python{emr.python}"
    assert f'dnf install -y "python{emr.python}"' in run and f'"{link}" -c' in run
    assert f"assert v == '{emr.python}'" in run
    assert keywords.index("USER") < keywords.index("RUN")
    # and gives the image back to EMR Serverless' user
    assert instructions[-1] == ("USER", "hadoop:hadoop")


def _run_instruction() -> str:
    """The Dockerfile's RUN command as its shell gets it (Docker passes build arguments as environment variables)."""
    (run,) = re.findall(r"^RUN (.*)$", re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text()), re.M)
    return run


@pytest.mark.skipif(not Path("/usr/bin/python3.11").is_file(), reason="needs an interpreter at /usr/bin/python3.11")
@pytest.mark.parametrize("python, passes", [("3.11", True), ("3", False)])
def test_the_image_build_fails_on_an_interpreter_of_another_version(python, passes):
    # given this machine's /usr/bin/python3.11 (and python3, a link to it) standing in for the image's: the RUN
    # step finds it (no dnf) and checks its version against the build argument
    done = subprocess.run(
        ["/bin/sh", "-c", _run_instruction()],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHON_VERSION": python},
    )
    # then the build goes on with 3.11 and fails on "3" (python3 is not version "3")
    assert (done.returncode == 0) is passes, done.stderr
    assert passes or "AssertionError" in done.stderr


# -- the release's image as it is ---------------------------------------------------------------------------------


def _job_template(tmp_path: Path, settings) -> tuple[dict, dict]:
    """SinkJob alone in a stack of the environment, synthesized: its template and its asset manifest."""
    ensure_artifacts()
    app = new_app(str(tmp_path))
    stack = Stack(app, "Job", env=Environment(account=settings.account, region=settings.region))
    SinkJob(
        stack,
        "Job",
        settings=settings,
        data_key=kms.Key(stack, "Key"),
        connectors=load_connectors(settings),
        table_arn="arn:aws:dynamodb:eu-west-1:111111111111:table/offsets",
        placement=ConnectorStacks(stack, 0),
    )
    app.synth()
    return (
        json.loads((tmp_path / "Job.template.json").read_text()),
        json.loads((tmp_path / "Job.assets.json").read_text()),
    )


def test_system_uses_the_release_image_as_it_is(tmp_path):
    template, assets = _job_template(tmp_path, _settings(interpreter="system"))
    (application,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::EMRServerless::Application"]
    assert "ImageConfiguration" not in application["Properties"]
    assert not assets.get("dockerImages")
    assert "CheckBootstrapVersionForEmrImage" not in template.get("Rules", {})


@pytest.mark.parametrize("value, source", [(None, "image"), ("image", "image"), ("system", "system")])
def test_the_interpreter_setting_defaults_to_the_image(value, source):
    doc = copy.deepcopy(DEV)
    doc["emr"].pop("interpreter", None)
    if value is not None:
        doc["emr"]["interpreter"] = value
    assert parse_settings("dev", doc, "dev.json").emr.interpreter_source == source


@pytest.mark.parametrize("value", ["archive", "", "IMAGE", 3])
def test_an_unknown_interpreter_source_is_named(value):
    with pytest.raises(SettingsError) as failed:
        _settings(interpreter=value)
    assert failed.value.setting == "emr.interpreter"


# -- the entry point's check --------------------------------------------------------------------------------------


def _archive(folder: Path, version: str, link: str | None = None) -> Path:
    """A job archive's layout as packaging writes it: pyvenv.cfg and bin/python linking to `link`."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {version}\n")
    if link:
        (folder / "bin" / "python").symlink_to(link)
    return folder


def test_the_archives_own_interpreter_passes(tmp_path):
    archive = _archive(tmp_path / "environment", "3.11", BASE_PYTHON)
    assert interpreter_problem(str(archive), (3, 11, 7), str(archive / "bin" / "python")) is None


@pytest.mark.parametrize(
    "version, running, executors, named",
    [
        # the archive's packages are for 3.11, its bin/python runs another Python
        ("3.11", (3, 9, 16), None, ("Python 3.11", "runs Python 3.9", 'emr.interpreter to "image"')),
        # the executors' interpreter leads to a path the image does not have
        ("3.11", (3, 11, 7), "missing", ("PYSPARK_PYTHON", "/nonexistent/python3.11", 'emr.interpreter to "image"')),
    ],
)
def test_an_interpreter_that_cannot_run_the_job_is_refused_naming_the_setting(
    tmp_path, version, running, executors, named
):
    archive = _archive(tmp_path / "environment", version)
    if executors:
        (archive / "bin" / "python").symlink_to("/nonexistent/python3.11")
        executors = str(archive / "bin" / "python")
    problem = interpreter_problem(str(archive), running, executors)
    assert problem is not None and all(part in problem for part in named), problem


def test_a_driver_outside_the_archive_exits_before_importing_the_engine(tmp_path):
    # given the entry point started with an interpreter that is not the archive's (no pyvenv.cfg at its prefix)
    done = subprocess.run(
        [BASE_PYTHON, str(packaging.ROOT / "infra" / "job" / "entrypoint.py"), "validate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    # then it exits 2 naming the driver's setting, not with the engine's ModuleNotFoundError
    assert done.returncode == 2, done.stderr
    assert "sink job cannot start" in done.stderr and "PYSPARK_DRIVER_PYTHON" in done.stderr
    assert "Traceback" not in done.stderr
