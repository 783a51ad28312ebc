"""`cdk synth` (app.py) reports a misfit connector or setting in one line naming its file and key, without a
Python traceback."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import infra.application
from infra.errors import ConnectorSpecError, SettingsError

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.mark.parametrize(
    "error, line",
    [
        (
            ConnectorSpecError("dev/orders.json", "s3.bucket.name", "must be 'acme-sink-dev-111111111111'"),
            "error: connector config dev/orders.json, key 's3.bucket.name': must be 'acme-sink-dev-111111111111'\n",
        ),
        (
            SettingsError("dev.json", "msk.cluster_arn", "must be in the environment's account and region"),
            "error: setting 'msk.cluster_arn' in dev.json: must be in the environment's account and region\n",
        ),
    ],
)
def test_a_misfit_is_one_line_naming_the_file_and_key(monkeypatch, capsys, error, line):
    # given a build that finds a misfit connector or setting
    def build(app, env, connectors=None, settings=None):
        raise error

    monkeypatch.setattr(infra.application, "build", build)
    # when the CDK app runs; then it exits 1 with that one line on stderr
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(APP), run_name="__main__")
    assert exited.value.code == 1
    assert capsys.readouterr().err == line
