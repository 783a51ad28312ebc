"""The job archive carries polars (requirements-columnar.txt) for Python 3.11 and later only."""
from __future__ import annotations

import pytest

from infra import packaging


@pytest.mark.parametrize("python, columnar", [("3.9", False), ("3.11", True), ("3.12", True)])
def test_the_columnar_requirements_go_into_archives_for_python_311_and_later(monkeypatch, tmp_path, python, columnar):
    # given a job archive build that records what pip installs
    installed = []
    monkeypatch.setattr(packaging, "_pip_install", lambda target, into, requirements: installed.append(requirements))
    monkeypatch.setattr(packaging, "_write_tar", lambda folder, archive: None)
    # when the archive is built for this Python
    packaging.build_job_archive(packaging.Target(python, "ARM64"), f"/usr/bin/python{python}", tmp_path)
    # then requirements.txt always goes in, requirements-columnar.txt only from 3.11
    files = [r[-1].rsplit("/", 1)[-1] for r in installed]
    assert files == ["requirements.txt"] + (["requirements-columnar.txt"] if columnar else [])

