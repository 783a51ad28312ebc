"""A connector's session: what a run of one connector holds while it runs (its config and settings, its target, its
lease token, the offsets store and the lease table), built once per connector by `open_session`. The bounded driver
(driver/job.py) and the continuous one (continuous/driver.py) open one per connector and then only schedule the
session's work on Spark: each session keeps its own lease, offsets, plans and commits; sessions of one job share
nothing but the Spark application and its executors."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.aws_types import DynamoDBClient
from sink_engine.clock import now_ms
from sink_engine.config import SinkConfig
from sink_engine.driver.planner import plan_ranges
from sink_engine.errors import LeaseHeldError, SinkError
from sink_engine.model import PartitionRange, TaskResult, TopicPartition
from sink_engine.offsets import LeaseKeeper, Leases, LeaseToken, OffsetStore, table_exists
from sink_engine.run.committer import commit_results
from sink_engine.run.plans import PlanStore
from sink_engine.run.preflight import missing_table
from sink_engine.run.settings import RunSettings
from sink_engine.run.wall_clock import needs_recorded_plan
from sink_engine.source.client_config import auto_offset_reset
from sink_engine.source.metadata import partition_watermarks
from sink_engine.source.settings import SourceSettings
from sink_engine.target.choice import target_for
from sink_engine.target.contract import Target


@dataclass(frozen=True)
class ConnectorSession:
    """One connector's share of a job, under the lease `token` (see the module docstring)."""

    config: SinkConfig
    run: RunSettings
    target: Target
    leases: Leases
    store: OffsetStore
    token: LeaseToken
    plans: PlanStore | None  # the recorded plans of its wall-clock cuts, when it needs them (run/wall_clock.py)

    @property
    def name(self) -> str:
        return self.config.name

    def keeper(self) -> LeaseKeeper:
        """The lease's renewals while the session works (a context manager)."""
        return LeaseKeeper(self.leases, self.token, self.run.lease_ms)

    def plan(self) -> tuple[list[PartitionRange], dict[TopicPartition, int]]:
        """The ranges to read from the committed offsets and Kafka's watermarks, with each partition's end offset
        (high watermark); DynamoDB is first moved forward to what the target committed before a crash
        (`Target.recover`), and the plan read again when it was."""
        ranges, ends = plan(self.config, self.store)
        if self.target.recover(self.store, self.token, {r.topic for r in ranges}):
            ranges, ends = plan(self.config, self.store)
        return ranges, ends

    def commit(self, results: list[TaskResult], ranges: list[PartitionRange]) -> list[TaskResult]:
        """The target's commit of the results (IcebergFormat: its snapshot), then their offsets, each under the
        lease; empty ranges pin their first start offset. The results committed."""
        self.target.commit(results, self.leases, self.token, self.run.lease_ms)
        unread = [TaskResult(range=r, next_offset=r.start_offset) for r in ranges if not len(r)]
        return commit_results(self.store, self.token, results + unread)

    def release(self) -> None:
        release_lease(self.leases, self.token)


def open_session(
    config: SinkConfig,
    dynamodb: DynamoDBClient,
    clock: Callable[[], int] = now_ms,
    owner: str | None = None,
    wait_s: float = 0.0,
    stop: threading.Event | None = None,
) -> ConnectorSession:
    """The connector's session, its lease taken: SinkError when the offsets table is missing, LeaseHeldError when a
    holder keeps the lease past `wait_s` seconds (0: at once), or `stop` is set while waiting. Unknown keys are
    reported once here (CONFIG_KEY_IGNORED)."""
    report_ignored_keys(config)
    run = RunSettings.from_config(config)
    if not table_exists(dynamodb, run.offsets_table):
        raise SinkError(missing_table(run.offsets_table))
    leases = Leases(dynamodb, run.offsets_table, clock)
    token = _acquire(leases, config.name, owner or uuid.uuid4().hex, run.lease_ms, wait_s, stop or threading.Event())
    store = OffsetStore(dynamodb, run.offsets_table, clock)
    plans = PlanStore(dynamodb, run.offsets_table) if needs_recorded_plan(config) else None
    return ConnectorSession(config, run, target_for(config), leases, store, token, plans)


def _acquire(
    leases: Leases, connector: str, owner: str, duration_ms: int, wait_s: float, stop: threading.Event
) -> LeaseToken:
    """The lease, trying again for up to `wait_s` while a holder's lease lapses (a killed run's, or the run EMR
    Serverless retries a failed streaming attempt after: it would exit 3 and spend a retry otherwise)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return leases.acquire(connector, owner, duration_ms)
        except LeaseHeldError:
            if time.monotonic() >= deadline or stop.wait(min(5.0, duration_ms / 4000)):
                raise


def plan(config: SinkConfig, store: OffsetStore) -> tuple[list[PartitionRange], dict[TopicPartition, int]]:
    """Read committed offsets and Kafka's watermarks and plan the connector's ranges; with each partition's end offset
    (high watermark). Records that expired before they were read are reported (RECORDS_EXPIRED)."""
    source = SourceSettings.from_config(config)
    marks = partition_watermarks(source)
    ranges = plan_ranges(
        list(marks),
        store.committed(config.name),
        marks,
        auto_offset_reset(source),
        RunSettings.from_config(config).max_records_per_partition,
    )
    for planned in ranges:
        if planned.expired:
            events.emit(
                events.RECORDS_EXPIRED,
                logging.WARNING,
                connector=config.name,
                topic=planned.topic,
                partition=planned.partition,
                committed=planned.expected_committed,
                expected=planned.expected_committed,  # as a continuous run's task names the offset it expected
                log_start=planned.start_offset,
                records=planned.expired,
            )
    return ranges, {tp: high for tp, (_, high) in marks.items()}


def report_ignored_keys(config: SinkConfig) -> None:
    """One CONFIG_KEY_IGNORED warning per connector key no one knows (config.ignored)."""
    for ignored in config.ignored:
        events.emit(
            events.CONFIG_KEY_IGNORED,
            level=logging.WARNING,
            connector=config.name,
            key=ignored.key,
            reason=ignored.reason,
            suggestion=ignored.suggestion,
        )


def release_lease(leases: Leases, token: LeaseToken) -> None:
    """Let the lease go. When DynamoDB does not take that (the SDK's retries failed), the lease lapses by itself
    after `sink.lease.duration.ms`: the run's own outcome, not the release's, is what its caller must see."""
    try:
        leases.release(token)
    except (ClientError, BotoCoreError) as e:
        events.emit(
            events.LEASE_RELEASE_FAILED,
            level=logging.WARNING,
            connector=token.connector,
            epoch=token.epoch,
            error=str(e),
        )
