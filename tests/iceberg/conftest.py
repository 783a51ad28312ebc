"""IcebergFormat connectors on the local stack: a SQL catalog in a SQLite file, the warehouse in moto's S3."""

from __future__ import annotations

import pytest

from tests.conftest import BUCKET
from tests.iceberg.every_table import pytest_runtest_call  # noqa: F401 (the hook, shared by import)


@pytest.fixture
def catalog_file(tmp_path):
    return tmp_path / "catalog.db"


@pytest.fixture
def iceberg_connector(connector, catalog_file, unique):
    """An IcebergFormat connector writing `lake_<unique>.events` (auto-created); overrides are connector keys."""

    def build(**overrides):
        return connector(
            **{
                "format.class": "IcebergFormat",
                "iceberg.tables": f"lake_{unique}.events",
                "iceberg.catalog.type": "sql",
                "iceberg.catalog.uri": f"sqlite:///{catalog_file}",
                "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse-{unique}",
                "iceberg.tables.auto-create-enabled": "true",
                **overrides,
            }
        )

    return build
