"""One synthesized app per environment, shared by every infra test (synthesis takes seconds per environment)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from infra import packaging  # noqa: E402
from infra.settings import ENVIRONMENTS_DIR, load_settings  # noqa: E402

ENVIRONMENTS = sorted(p.stem for p in ENVIRONMENTS_DIR.glob("*.json"))


@dataclass
class Synthesized:
    env: str
    outdir: Path
    deployment: object
    templates: dict[str, dict]  # "data" / "service" -> CloudFormation template

    def template(self, which: str):
        from aws_cdk.assertions import Template

        return Template.from_json(self.templates[which])


def ensure_artifacts() -> None:
    """Build what `make package` builds, when it is missing (synthesis needs the archive and the layers)."""
    targets = set()
    for env in ENVIRONMENTS:
        emr = load_settings(env).emr
        targets.add((packaging.Target(emr.python, emr.architecture), emr.interpreter))
    for target, interpreter in targets:
        if not packaging.job_archive_path(target).is_file():
            packaging.build_job_archive(target, interpreter)
    for name in packaging.LAYERS:
        if not (packaging.lambda_layer_path(name) / "python").is_dir():
            packaging.build_lambda_layer(name)


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory) -> dict[str, Synthesized]:
    from infra.application import build, new_app

    ensure_artifacts()
    result = {}
    for env in ENVIRONMENTS:
        outdir = tmp_path_factory.mktemp(f"cdk-{env}")
        app = new_app(str(outdir))
        deployment = build(app, env)
        app.synth()
        templates = {
            which: json.loads((outdir / f"{stack.stack_name}.template.json").read_text())
            for which, stack in (("data", deployment.data), ("service", deployment.service))
        }
        result[env] = Synthesized(env, outdir, deployment, templates)
    return result


@pytest.fixture(params=ENVIRONMENTS)
def each_env(request, synthesized) -> Synthesized:
    return synthesized[request.param]


@pytest.fixture
def dev(synthesized) -> Synthesized:
    return synthesized["dev"]


@pytest.fixture
def prod(synthesized) -> Synthesized:
    return synthesized["prod"]
