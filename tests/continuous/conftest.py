"""Continuous runs: the fault suite's seeded randomness (`seed`, printed with a failure)."""

from tests.faults.conftest import pytest_runtest_makereport, seed  # noqa: F401 (fixture and hook shared by import)
