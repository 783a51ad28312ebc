"""The job archive carries the columnar fast paths (requirements-columnar.txt: polars, ptars) beside the engine's
requirements, for every Python the stack deploys."""

from __future__ import annotations

import pytest

from infra import packaging


@pytest.mark.parametrize("python", ["3.11", "3.12"])
def test_the_columnar_requirements_go_into_every_job_archive(monkeypatch, tmp_path, python):
    # given a job archive build that records what pip installs
    installed = []
    monkeypatch.setattr(packaging, "_pip_install", lambda target, into, requirements: installed.append(requirements))
    monkeypatch.setattr(packaging, "_write_tar", lambda folder, archive: None)
    # when the archive is built for this Python
    packaging.build_job_archive(packaging.Target(python, "ARM64"), f"/usr/bin/python{python}", tmp_path)
    # then requirements.txt and requirements-columnar.txt go in
    files = [r[-1].rsplit("/", 1)[-1] for r in installed]
    assert files == ["requirements.txt", "requirements-columnar.txt"]
