"""Recorded plans: the wall-clock decisions of a run (scheduled cut, Wallclock time), written before any
upload and reused by the next run when this one died before committing, so a retry writes the same files.

One `PLAN#` item per topic-partition (`sink_engine.offsets.layout`). A plan is reused only while the
partition's committed offset is still its start (its run committed nothing); the driver deletes the plans once
its commits are done.
"""

from __future__ import annotations

from collections.abc import Iterator

from botocore.exceptions import ClientError

from sink_engine.aws_types import DynamoDBClient
from sink_engine.errors import CommitConflictError
from sink_engine.model import PartitionRange, TopicPartition
from sink_engine.offsets import layout
from sink_engine.offsets.lease import LeaseToken
from sink_engine.offsets.transactions import transact_write

_TRANSACTION_ITEMS = 100


def _key(connector: str, tp: TopicPartition) -> dict:
    return layout.key(connector, layout.plan_sk(tp.topic, tp.partition))


class PlanStore:
    def __init__(self, dynamodb: DynamoDBClient, table: str) -> None:
        self._db, self._table = dynamodb, table

    def recorded(self, connector: str) -> dict[TopicPartition, PartitionRange]:
        """Every recorded plan of the connector (strongly consistent)."""
        found = {}
        for item in layout.items_under(self._db, self._table, connector, layout.PLAN_PREFIX):
            planned = _from_item(item)
            found[planned.tp] = planned
        return found

    def record(self, token: LeaseToken, ranges: list[PartitionRange]) -> None:
        """Write the plans, conditional on the lease epoch still being ours (CommitConflictError if not).

        A retry after a lost answer meets no condition of its own write (the lease check holds again, the puts
        are unconditional); it carries the first try's ClientRequestToken all the same, so that AWS answers it
        with the first try's outcome (moto ignores the token)."""
        check = token.fencing_check(self._table)
        for batch in _batches(ranges, _TRANSACTION_ITEMS - 1):
            puts = [{"Put": {"TableName": self._table, "Item": _to_item(token, planned)}} for planned in batch]
            try:
                transact_write(self._db, [check, *puts])
            except ClientError as e:
                if e.response["Error"]["Code"] == "TransactionCanceledException":
                    raise CommitConflictError(
                        token.connector, batch[0].topic, batch[0].partition, batch[0].start_offset
                    ) from None
                raise

    def forget(self, connector: str, tps: list[TopicPartition]) -> None:
        """Delete the plans of these partitions (after their run's commits)."""
        for batch in _batches(tps, 25):
            requests = [{"DeleteRequest": {"Key": _key(connector, tp)}} for tp in batch]
            pending: dict | None = {self._table: requests}
            while pending:
                pending = self._db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or None


def _batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _to_item(token: LeaseToken, planned: PartitionRange) -> dict:
    item = {
        **_key(token.connector, planned.tp),
        "topic": {"S": planned.topic},
        "partition": {"N": str(planned.partition)},
        "start_offset": {"N": str(planned.start_offset)},
        "end_offset": {"N": str(planned.end_offset)},
        "cut_at_end": {"BOOL": planned.cut_at_end},
        "epoch": {"N": str(token.epoch)},
    }
    if planned.expected_committed is not None:
        item["expected_committed"] = {"N": str(planned.expected_committed)}
    if planned.wallclock_ms is not None:
        item["wallclock_ms"] = {"N": str(planned.wallclock_ms)}
    return item


def _from_item(item: dict) -> PartitionRange:
    number = lambda name: int(item[name]["N"]) if name in item else None  # noqa: E731
    return PartitionRange(
        item["topic"]["S"],
        int(item["partition"]["N"]),
        int(item["start_offset"]["N"]),
        int(item["end_offset"]["N"]),
        number("expected_committed"),
        item["cut_at_end"]["BOOL"],
        number("wallclock_ms"),
    )
