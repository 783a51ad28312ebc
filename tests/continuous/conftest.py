"""Continuous runs: the fault suite's seeded randomness (`seed`, printed with a failure); with
ICEBERG_JAVA_READER=1, every Iceberg table read back read by three readers (tests/iceberg/every_table.py)."""

from tests.faults.conftest import pytest_runtest_makereport, seed  # noqa: F401 (fixture and hook shared by import)
from tests.iceberg.every_table import pytest_runtest_call  # noqa: F401 (the hook, shared by import)
