"""The README's deploy commands that can run here, as a user runs them: `npx aws-cdk synth -c env=<env>` with the CLI
that package.json pins (`make cdk-cli`; npx resolves it from node_modules), which runs cdk.json's `app`; a bad
setting fails it naming the setting."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _synth(env: str, outdir: Path) -> subprocess.CompletedProcess:
    variables = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    return subprocess.run(
        [
            "npx",
            "--no-install",
            "aws-cdk",
            "synth",
            "-c",
            f"env={env}",
            "--output",
            str(outdir),
            "--quiet",
            "--no-notices",
        ],
        cwd=ROOT,
        env=variables,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_npx_runs_the_pinned_cli_that_reads_this_cdk_libs_assemblies():
    """An unpinned `npx aws-cdk` takes the registry's latest (3.0.0 when this was written), which refuses
    aws-cdk-lib 2.275's cloud assembly (schema 55, it reads up to 43)."""
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"]
    done = subprocess.run(
        ["npx", "--no-install", "aws-cdk", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.split()[0] == pinned, done.stderr


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_cdk_synth_writes_both_stacks(env, tmp_path):
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    done = _synth(env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]  # every construct annotation acknowledged or fixed
    assert {p.name for p in tmp_path.glob("*.template.json")} == {
        f"Sink-{env}-Data.template.json",
        f"Sink-{env}-Service.template.json",
    }


def test_cdk_synth_of_an_unknown_environment_names_it(tmp_path):
    done = _synth("nosuchenv", tmp_path)
    assert done.returncode != 0
    assert "nosuchenv" in done.stderr and "Traceback" not in done.stderr


def test_a_template_too_large_for_cloudformation_fails_naming_its_stack(dev):
    from infra.application import check_template_sizes
    from infra.errors import TemplateSizeError

    check_template_sizes(dev.outdir)  # dev's stacks are far under the limit
    with pytest.raises(
        TemplateSizeError,
        match=r"stack Sink-dev-Service: its template is [\d,]+ bytes, over "
        r"CloudFormation's 50,000; each connector adds about",
    ):
        check_template_sizes(dev.outdir, limit=50_000)
