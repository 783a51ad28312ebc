"""Runs on a Spark whose executors are separate processes (tests/spark_cluster.py)."""

from tests.iceberg.conftest import catalog_file, iceberg_connector  # noqa: F401 (fixtures shared by import)
