"""A continuous run's Spark task: it serves its shares of one or more connectors (continuous/share.py: each a consumer
of the connector's own and a `PartitionStream` per topic-partition, under the connector's lease) for as long as any
of them runs, stepping them in turn.

One consumer per connector, not one per task: connectors differ in their client settings (brokers, credentials,
`consumer.override.*`, isolation level), two connectors may read one topic-partition at different offsets (a consumer
assigns a partition once), and a connector that ends closes its consumer without touching the others'. A connector
has a share in at most `tasks.max` tasks (continuous/spread.py), so the consumers of a job are as many as Kafka
Connect's workers would open for the same connectors, whatever the number of cores.

A round steps each active share once, each step waiting for records up to POLL_S divided among the shares (a fetch
returns before that only with a full batch): a round takes about POLL_S, as a cycle of a task of one connector does
(what a wall-clock cut or a stop waits behind at most), while librdkafka fetches for every consumer in its own
threads. A step that does not wait would spin: records of some connector arrive all the time, and the task would
burn its core stepping shares with a handful of records each (measured: `make bench-many`). A share that ended
(its error, its lost lease, a stop requested) is closed and reported at once; the task ends with its last share.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterable, Iterator

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.aws import dynamodb_client
from sink_engine.clock import now_ms
from sink_engine.continuous.run_progress import TaskTotals, put_task_totals
from sink_engine.continuous.settings import ContinuousSettings
from sink_engine.continuous.share import ConnectorShare, ShareStart, StreamReport
from sink_engine.run.spark_runner import settle_worker

POLL_S = 0.2  # an idle task's round: what a cut or a stop waits behind at most


def stream_task(
    publish: bool, clock: Callable[[], int] = now_ms
) -> Callable[[Iterable[list[ShareStart]]], Iterator[StreamReport]]:
    """The function of a continuous run's Spark tasks: each element of the task's partition is the list of its
    shares; yields a StreamReport per topic-partition as its share ends. `publish`: send each progress report to
    CloudWatch too (continuous/progress.py). The tasks log the engine's events at the driver's level (`-v`: INFO) to
    their standard error, which Spark keeps as the executor's log."""
    level = logging.getLogger("sink_engine").getEffectiveLevel()

    def process(plans: Iterable[list[ShareStart]]) -> Iterator[StreamReport]:
        settle_worker()
        if not logging.getLogger().handlers:
            logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        for starts in plans:
            yield from serve(starts, publish, clock, task)

    return process


def serve(starts: list[ShareStart], publish: bool, clock: Callable[[], int], task: int) -> Iterator[StreamReport]:
    """Step the shares in turn until every one ended (module docstring); each share's reports as it ends."""
    active: list[ConnectorShare] = []
    for start in starts:
        try:
            active.append(ConnectorShare(start, publish, clock, task))
        except Exception as e:  # noqa: BLE001 - a share that cannot open ends alone
            yield from _not_opened(start, e, task, clock)
    while active:
        wait_s = POLL_S / len(active)
        for share in active:
            try:
                share.step(wait_s)
            except Exception as e:  # noqa: BLE001 - an error of one connector's share ends that share alone
                share.fail(e)
        for share in [s for s in active if s.ended]:
            active.remove(share)
            yield from _closed(share, task)


def _closed(share: ConnectorShare, task: int) -> list[StreamReport]:
    reports = share.close()
    if share.error is not None or share.lost:
        events.emit(
            events.SHARE_FAILED,
            logging.ERROR,
            connector=share.connector,
            task=task,
            cause="lease lost" if share.lost and share.error is None else share.error,
            partitions=len(reports),
        )
    return reports


def _not_opened(start: ShareStart, error: Exception, task: int, clock: Callable[[], int]) -> list[StreamReport]:
    """The reports of a share that could not open, its end put in its PROGRESS item (if DynamoDB takes it)."""
    cause = f"{type(error).__name__}: {error}"
    events.emit(events.SHARE_FAILED, logging.ERROR, connector=start.token.connector, task=task, cause=cause)
    run = ContinuousSettings.from_config(start.target.config).run
    totals = TaskTotals(0, 0, 0, 0.0, len(start.starts), ended=True, error=cause)
    with contextlib.suppress(ClientError, BotoCoreError):  # else the driver learns of it when the job ends
        put_task_totals(dynamodb_client(run.region), run.offsets_table, start.token, task, totals, clock())
    return [StreamReport(start.token.connector, s.tp, s.planned_offset, error=cause) for s in start.starts]
