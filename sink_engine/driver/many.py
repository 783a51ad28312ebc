"""Bounded runs of several connectors in one Spark application: each connector's run (driver/job.py: its own
session, lease, plan, Spark job group, commit and release) in a thread of the driver, `parallel` at a time. Spark
runs the jobs the threads submit side by side on the application's executors (its FIFO scheduler hands free task
slots to the job submitted first); nothing else is shared, so a connector's failure, timeout or lost lease ends its
run alone and is its outcome, while the others commit."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.driver.job import RunSummary


@dataclass(frozen=True)
class Outcome:
    """How a connector's run ended: its summary, or the error it ended on (what it committed before is kept)."""

    connector: str
    summary: RunSummary | None = None
    error: Exception | None = None


def run_each(configs: list[SinkConfig], run_one: Callable[[SinkConfig], RunSummary], parallel: int) -> list[Outcome]:
    """Every connector's outcome, in the order of `configs`; `run_one` runs one connector (in a thread of its own,
    at most `parallel` at once)."""

    def outcome(config: SinkConfig) -> Outcome:
        try:
            return Outcome(config.name, summary=run_one(config))
        except Exception as e:  # noqa: BLE001 - one connector's failure is its outcome: the others go on
            return Outcome(config.name, error=e)

    with ThreadPoolExecutor(max(1, min(parallel, len(configs))), thread_name_prefix="connector") as pool:
        return list(pool.map(outcome, configs))
