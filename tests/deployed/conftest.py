"""One set of deployed artifacts per session, built for this machine on first use (see artifacts.py), and the
dev environment synthesized once (see template.py)."""
from __future__ import annotations

import pytest

from tests.deployed.artifacts import Artifacts
from tests.deployed.template import Templates, synthesize


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Artifacts:
    return Artifacts(tmp_path_factory.mktemp("deployed"))


@pytest.fixture(scope="session")
def dev_templates(tmp_path_factory) -> Templates:
    """The dev environment synthesized once (from the artifacts of `make package`, built here when missing)."""
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    return synthesize("dev", tmp_path_factory.mktemp("cdk-dev"))
