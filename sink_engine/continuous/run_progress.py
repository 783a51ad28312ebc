"""What a continuous run shows of itself while it runs: each task puts its totals in its `PROGRESS#<task>` item of the
offsets table when it starts and every `sink.continuous.metrics.interval.ms` (with its STREAM_PROGRESS report), and
the driver, wherever its tasks run, reads them and says one line for the whole run (records and files written since
the run started, lag, freshness) each time every task has reported again, or an interval passed with some new
report; also logged as a RUN_PROGRESS event. A task's share that ended puts its end there too (`ended`, and its
`error` if it failed): `ends` tells the driver which shares of the connector ended, and why."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

import sink_engine.offsets.layout as layout
from sink_engine import events
from sink_engine.aws_types import DynamoDBClient
from sink_engine.offsets import LeaseToken


@dataclass(frozen=True)
class TaskTotals:
    """One task's figures since it started: records and files written, and now: lag (records after its partitions'
    committed offsets) and freshness (the age of its oldest record read but not yet in S3)."""

    records_written: int
    files: int
    lag: int
    freshness_s: float
    partitions: int
    ended: bool = False  # the task's share of the connector ended (continuous/share.py)
    error: str | None = None  # why, when it failed


def put_task_totals(
    dynamodb: DynamoDBClient, table: str, token: LeaseToken, task: int, totals: TaskTotals, now_ms: int
) -> None:
    """Replace the task's PROGRESS# item (unconditionally: it only informs; the epoch tells this run's apart)."""
    dynamodb.put_item(
        TableName=table,
        Item={
            **layout.key(token.connector, layout.progress_sk(task)),
            "epoch": {"N": str(token.epoch)},
            "records_written": {"N": str(totals.records_written)},
            "files": {"N": str(totals.files)},
            "lag": {"N": str(totals.lag)},
            "freshness_s": {"N": f"{totals.freshness_s:.3f}"},
            "partitions": {"N": str(totals.partitions)},
            "reported_at_ms": {"N": str(now_ms)},
            **({"ended": {"BOOL": True}} if totals.ended else {}),
            **({"error": {"S": totals.error[:2000]}} if totals.error else {}),
        },
    )


class RunProgress:
    """The driver's side: `tick()` often (it reads the items at most every fifth of the interval, 1 to 10 s);
    `ends`: the tasks whose share of the connector ended as last read, with the error each failed on (None: none)."""

    def __init__(
        self,
        dynamodb: DynamoDBClient,
        table: str,
        token: LeaseToken,
        tasks: int,
        every_ms: int,
        say: Callable[[str], None],
    ) -> None:
        self._db, self._table, self._token, self._tasks, self._every_ms = dynamodb, table, token, tasks, every_ms
        self._say = say
        self._look_every_s = min(10.0, max(1.0, every_ms / 5000))
        self._looked = self._said = 0.0
        self._last_reports: dict[str, int] = {}
        self._last_records = 0
        self.ends: dict[str, str | None] = {}

    def tick(self) -> None:
        if time.monotonic() - self._looked < self._look_every_s:
            return
        self._looked = time.monotonic()
        try:
            reports = {
                item[layout.SK]["S"]: item
                for item in layout.items_under(self._db, self._table, self._token.connector, layout.PROGRESS_PREFIX)
                if int(item["epoch"]["N"]) == self._token.epoch
            }
        except (ClientError, BotoCoreError) as e:  # it only informs: the run goes on
            events.emit(
                events.METRICS_PUBLISH_FAILED, level=logging.WARNING, connector=self._token.connector, error=str(e)
            )
            return
        self.ends = {
            sk: item["error"]["S"] if "error" in item else None for sk, item in reports.items() if "ended" in item
        }
        newer = [sk for sk, item in reports.items() if int(item["reported_at_ms"]["N"]) > self._last_reports.get(sk, 0)]
        every_task = len(newer) >= self._tasks
        interval_passed = time.monotonic() - self._said >= self._every_ms / 1000
        if not newer or not (every_task or interval_passed):
            return
        self._line(reports)
        self._last_reports = {sk: int(item["reported_at_ms"]["N"]) for sk, item in reports.items()}
        self._said = time.monotonic()

    def _line(self, reports: dict[str, dict]) -> None:
        def total(name: str) -> int:
            return sum(int(item[name]["N"]) for item in reports.values())

        records, files, lag = total("records_written"), total("files"), total("lag")
        freshness = max(float(item["freshness_s"]["N"]) for item in reports.values())
        since = f" (+{records - self._last_records:,} since the last line)" if self._said else ""
        self._say(
            f"progress: {records:,} records in {files:,} files since the run started{since}; lag {lag:,} records; "
            f"freshness {freshness:.1f} s ({len(reports)} of {self._tasks} tasks reporting)"
        )
        events.emit(
            events.RUN_PROGRESS,
            connector=self._token.connector,
            records_written=records,
            files=files,
            lag=lag,
            freshness_s=freshness,
            tasks=len(reports),
        )
        self._last_records = records
