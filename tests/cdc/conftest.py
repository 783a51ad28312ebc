"""The CDC end-to-end test's fixtures: the Iceberg connectors of tests/iceberg, a PostgreSQL cluster of its own."""

from __future__ import annotations

import pytest

from tests.iceberg.conftest import catalog_file, iceberg_connector  # noqa: F401 (fixtures)


@pytest.fixture
def postgres():
    from devtools.postgres import Postgres

    with Postgres() as cluster:
        yield cluster
