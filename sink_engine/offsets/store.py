"""Committed offsets: read them, and commit one topic-partition under the lease's fencing token."""
from __future__ import annotations

import time
from typing import Callable

from botocore.exceptions import BotoCoreError, ClientError

import sink_engine.offsets.layout as layout
from sink_engine.errors import CommitConflictError, CommitFailedError
from sink_engine.model import CommittedOffset, TopicPartition
from sink_engine.offsets.lease import LeaseToken
from sink_engine.offsets.transactions import transact_write


def _key(connector: str, tp: TopicPartition) -> dict:
    return layout.key(connector, layout.offset_sk(tp.topic, tp.partition))


class OffsetStore:
    def __init__(self, dynamodb, table: str, clock: Callable[[], int], sleep: Callable[[float], None] = time.sleep):
        self._db, self._table, self._clock, self._sleep = dynamodb, table, clock, sleep

    def committed(self, connector: str) -> dict[TopicPartition, CommittedOffset]:
        """Every committed offset of the connector (strongly consistent)."""
        found: dict[TopicPartition, CommittedOffset] = {}
        for item in layout.items_under(self._db, self._table, connector, layout.OFFSET_PREFIX):
            tp = TopicPartition(item["topic"]["S"], int(item["partition"]["N"]))
            found[tp] = CommittedOffset(
                next_offset=int(item["next_offset"]["N"]),
                committed_at_ms=int(item["committed_at_ms"]["N"]),
                last_file=item.get("last_file", {}).get("S"),
                dead_letters=_counters(item, layout.DEAD_LETTERS_PREFIX),
                skipped=_counters(item, layout.SKIPPED_PREFIX),
                first_offset=int(item["first_offset"]["N"]) if "first_offset" in item else None,
            )
        return found

    def dlq_scan_from(self, connector: str, tp: TopicPartition) -> int | None:
        """The dead-letter topic position stored with the last commit of `tp` (see sink_engine.dlq)."""
        item = self._item(connector, tp)
        return int(item["dlq_scan_from"]["N"]) if "dlq_scan_from" in item else None

    def commit(
        self, token: LeaseToken, tp: TopicPartition, expected: int | None, next_offset: int, last_file: str | None,
        dead_letters: dict | None = None, dlq_scan_from: int | None = None, skipped: dict | None = None,
        start_offset: int | None = None,
    ) -> None:
        """Set next_offset if the lease epoch is still ours and the committed offset is still `expected`.

        `expected=None` means nothing was committed for this topic-partition. Raises CommitConflictError, or
        CommitFailedError when DynamoDB did not answer for good and the commit did not happen (or cannot be told).
        `dead_letters` (error class -> count) and `skipped` (reason -> offsets settled in no object and no dead
        letter) are added to the item's counters in the same transaction; `start_offset`, the range's first offset,
        is stored as `first_offset` by the first commit (`expected=None`) only.

        A retry of a transaction whose answer was lost carries the same ClientRequestToken (AWS then answers with
        the first try's outcome, for 10 minutes; moto ignores the token). Without that, the retry fails its
        condition against this run's own write: before reporting a conflict, the item is read back, and this
        epoch with this next offset is this run's commit. A transaction DynamoDB cancels for a transient reason
        (a concurrent lease renewal: TransactionConflict; throttling) is sent again first (offsets/transactions.py).
        """
        counters = {f"{layout.DEAD_LETTERS_PREFIX}{name}": n for name, n in (dead_letters or {}).items()}
        counters.update({f"{layout.SKIPPED_PREFIX}{name}": n for name, n in (skipped or {}).items()})
        first = start_offset if expected is None else None
        items = self._transaction(token, tp, expected, next_offset, last_file, counters, dlq_scan_from, first)
        try:
            transact_write(self._db, items, self._sleep)
        except ClientError as e:
            if e.response["Error"]["Code"] != "TransactionCanceledException":
                return self._confirm(token, tp, next_offset, e)
            if not self._holds(token, tp, next_offset):
                raise CommitConflictError(token.connector, tp.topic, tp.partition, expected) from None
        except BotoCoreError as e:
            self._confirm(token, tp, next_offset, e)

    def _confirm(self, token: LeaseToken, tp: TopicPartition, next_offset: int, cause: Exception) -> None:
        """After the SDK's last try failed (its earlier tries may have been applied, their answers lost): return
        if the commit happened all the same, else raise CommitFailedError saying whether it did not happen."""
        try:
            committed = self._holds(token, tp, next_offset)
        except (ClientError, BotoCoreError):
            committed = None
        if not committed:
            raise CommitFailedError(token.connector, tp.topic, tp.partition, next_offset, committed, str(cause)) \
                from cause

    def _holds(self, token: LeaseToken, tp: TopicPartition, next_offset: int) -> bool:
        """Whether the offsets item holds this run's commit: this epoch (one run per epoch) and this offset."""
        item = self._item(token.connector, tp)
        return (item.get("epoch", {}).get("N"), item.get("next_offset", {}).get("N")) == (str(token.epoch),
                                                                                           str(next_offset))

    def _item(self, connector: str, tp: TopicPartition) -> dict:
        return self._db.get_item(TableName=self._table, Key=_key(connector, tp), ConsistentRead=True).get("Item", {})

    def _transaction(self, token: LeaseToken, tp: TopicPartition, expected: int | None, next_offset: int,
                     last_file: str | None, counters: dict, dlq_scan_from: int | None,
                     first_offset: int | None) -> list[dict]:
        """The lease check and the conditional update of the offsets item."""
        offset_condition = "attribute_not_exists(next_offset)" if expected is None else "next_offset = :expected"
        values = {
            ":next": {"N": str(next_offset)}, ":epoch": {"N": str(token.epoch)},
            ":now": {"N": str(self._clock())}, ":topic": {"S": tp.topic}, ":partition": {"N": str(tp.partition)},
        }
        update = "SET next_offset = :next, epoch = :epoch, committed_at_ms = :now, topic = :topic, #p = :partition"
        if last_file is not None:
            values[":file"] = {"S": last_file}
            update += ", last_file = :file"
        if expected is not None:
            values[":expected"] = {"N": str(expected)}
        if dlq_scan_from is not None:
            values[":scan"] = {"N": str(dlq_scan_from)}
            update += ", dlq_scan_from = :scan"
        if first_offset is not None:
            values[":first"] = {"N": str(first_offset)}
            update += ", first_offset = :first"
        names = {"#p": "partition"}
        added = sorted(counters.items())
        for i, (name, count) in enumerate(added):
            names[f"#c{i}"], values[f":c{i}"] = name, {"N": str(count)}
        if added:
            update += " ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(added)))
        return [
            token.fencing_check(self._table),
            {"Update": {
                "TableName": self._table,
                "Key": _key(token.connector, tp),
                "UpdateExpression": update,
                "ConditionExpression": offset_condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }},
        ]


def _counters(item: dict, prefix: str) -> dict[str, int]:
    """The item's counters named `<prefix><name>`, by name."""
    return {name[len(prefix):]: int(value["N"]) for name, value in item.items() if name.startswith(prefix)}
