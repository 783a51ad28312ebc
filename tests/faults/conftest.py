"""Shared fixtures of the fault matrix: seeds (printed when a scenario fails), the figures each scenario reports
(printed as one table at the end of the session), and the AWS fault proxy in front of moto.

A scenario's figures travel in its teardown report (`user_properties`), so that the table is whole also when
pytest-xdist runs the scenarios in worker processes: the controller's terminal reporter holds every report.

Scenario files add their own fixtures here by appending; keep each generic."""

from __future__ import annotations

import os
import time
import zlib

import pytest

from devtools.faults.aws_proxy import AwsFaultProxy
from devtools.faults.report import format_table, write_rows

_FIGURES = "fault_figures"  # the user property that carries a scenario's row
_SEEDS = pytest.StashKey[int]()


@pytest.fixture
def seed(request) -> int:
    """`SEED` from the environment, else a stable number per test (so every run of a scenario is the same)."""
    value = int(os.environ.get("SEED") or zlib.crc32(request.node.nodeid.encode()) % 100_000)
    request.node.stash[_SEEDS] = value
    return value


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and _SEEDS in item.stash:
        report.sections.append(
            ("fault seed", f"rerun with: SEED={item.stash[_SEEDS]} .venv/bin/python -m pytest '{item.nodeid}'")
        )
    return report


@pytest.fixture
def figures(request):
    """A dict the scenario fills (faults, runs, exit_codes, records, duplicates, missing, leftover_uploads);
    its seconds and outcome are added after the test and the row joins the session's table."""
    row: dict = {"scenario": request.node.nodeid.split("::", 1)[-1], "file": request.node.path.name}
    started = time.monotonic()
    yield row
    row["seconds"] = round(time.monotonic() - started, 1)
    request.node.user_properties.append((_FIGURES, row))


def pytest_terminal_summary(terminalreporter, config):
    rows = [
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", None) == "teardown"
        for name, value in getattr(report, "user_properties", ())
        if name == _FIGURES
    ]
    if rows:
        terminalreporter.section("fault matrix figures")
        terminalreporter.write_line(format_table(rows))
        if os.environ.get("FAULT_FIGURES"):
            write_rows(rows, os.environ["FAULT_FIGURES"])


@pytest.fixture(scope="session")
def aws_proxy(stack):
    """The fault proxy in front of the session's moto server (one for the session, so that Spark's Python
    workers started for its address are reused by every scenario)."""
    with AwsFaultProxy(stack.aws_endpoint) as proxy:
        yield proxy


@pytest.fixture
def aws_faults(request, aws_proxy, seed, monkeypatch, s3, dynamodb):
    """The proxy, reset and seeded, with boto3 clients created in this test (driver and, when the test uses
    `spark`, its Python workers) pointed at it through AWS_ENDPOINT_URL. The `s3` and `dynamodb` fixtures (the
    session's clients) still talk to moto directly: use them to check what happened."""
    aws_proxy.reset(seed)
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws_proxy.url)
    environment = None
    if "spark" in request.fixturenames:
        environment = request.getfixturevalue("spark").sparkContext.environment
        saved = environment.get("AWS_ENDPOINT_URL")
        environment["AWS_ENDPOINT_URL"] = aws_proxy.url
    try:
        yield aws_proxy
    finally:
        aws_proxy.reset(seed)
        if environment is not None:
            if saved is None:
                environment.pop("AWS_ENDPOINT_URL", None)
            else:
                environment["AWS_ENDPOINT_URL"] = saved
