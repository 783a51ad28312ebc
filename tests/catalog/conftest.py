"""Fixtures of the Athena table tests: java.time for the date projection (one JVM per session)."""

from __future__ import annotations

import pytest

from tests.catalog.java_time import JavaTime


@pytest.fixture(scope="session")
def java_time():
    java = JavaTime()
    yield java
    java.close()
