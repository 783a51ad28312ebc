"""The dev environment synthesized once (see template.py). The deployed artifacts (`artifacts`, see artifacts.py)
are tests/conftest.py's, one set per session shared with tests/e2e."""

from __future__ import annotations

import pytest

from tests.deployed.template import Templates, synthesize


@pytest.fixture(scope="session")
def dev_templates(tmp_path_factory) -> Templates:
    """The dev environment synthesized once (from the artifacts of `make package`, built here when missing)."""
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    return synthesize("dev", tmp_path_factory.mktemp("cdk-dev"))
