"""The README's deploy commands that can run here: `cdk synth -c env=<env>` runs `app.py` (cdk.json's `app`) with
the context and output folder in CDK_CONTEXT_JSON and CDK_OUTDIR, as the CDK CLI does; a bad setting fails it
naming the setting."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _synth(env: str, outdir: Path) -> subprocess.CompletedProcess:
    command = json.loads((ROOT / "cdk.json").read_text())["app"].split()
    assert command[-1] == "app.py"
    variables = {**os.environ, "CDK_CONTEXT_JSON": json.dumps({"env": env}), "CDK_OUTDIR": str(outdir),
                 "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    return subprocess.run([sys.executable, "app.py"], cwd=ROOT, env=variables, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("env", ["dev"])
def test_cdk_synth_writes_both_stacks(env, tmp_path):
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    done = _synth(env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p.name for p in tmp_path.glob("*.template.json")} == {f"Sink-{env}-Data.template.json",
                                                                  f"Sink-{env}-Service.template.json"}


def test_cdk_synth_of_an_unknown_environment_names_it(tmp_path):
    done = _synth("nosuchenv", tmp_path)
    assert done.returncode != 0
    assert "nosuchenv" in done.stderr
