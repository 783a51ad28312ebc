"""The end-to-end chain runs in a world of its own: a broker and an IAM-enforcing moto (tests/iam's fixtures,
instantiated here apart from tests/iam's session), the dev stacks synthesized for the test connector, and the
artifacts built from this tree (tests/conftest.py's `artifacts`, shared with tests/deployed)."""

from __future__ import annotations

import pytest

from tests.iam.conftest import (  # noqa: F401
    call_log,
    cloudformation,
    deployed,
    iam_stack,
    iam_synthesized,
    principals,
    role_ids,
    world,
)
from tests.spark_cluster import StandaloneCluster


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A standalone Spark master and two workers, each with its own work directory and none of the test's
    environment: the job's executors are separate processes that unpack the archive themselves, as on EMR."""
    with StandaloneCluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
