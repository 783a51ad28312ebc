"""Committed offsets: read them, and commit topic-partitions under the lease's fencing token, up to 99 in one
transaction."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

import sink_engine.offsets.layout as layout
from sink_engine.aws_types import DynamoDBClient
from sink_engine.errors import CommitConflictError, CommitFailedError
from sink_engine.model import CommittedOffset, TopicPartition
from sink_engine.offsets.lease import LeaseToken
from sink_engine.offsets.transactions import transact_write

MAX_COMMITS = 99  # TransactWriteItems takes at most 100 items: one is the lease check


@dataclass(frozen=True)
class OffsetCommit:
    """One topic-partition's commit: `next_offset` if the committed offset is still `expected` (None: nothing
    committed yet); `dead_letters` (error class -> count) and `skipped` (reason -> offsets settled in no object
    and no dead letter) are added to the item's counters; `start_offset`, the range's first offset, is stored as
    `first_offset` by the first commit only."""

    tp: TopicPartition
    expected: int | None
    next_offset: int
    last_file: str | None = None
    dead_letters: dict | None = None
    dlq_scan_from: int | None = None
    skipped: dict | None = None
    start_offset: int | None = None


def _key(connector: str, tp: TopicPartition) -> dict:
    return layout.key(connector, layout.offset_sk(tp.topic, tp.partition))


class OffsetStore:
    def __init__(
        self,
        dynamodb: DynamoDBClient,
        table: str,
        clock: Callable[[], int],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
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
        self,
        token: LeaseToken,
        tp: TopicPartition,
        expected: int | None,
        next_offset: int,
        last_file: str | None,
        dead_letters: dict | None = None,
        dlq_scan_from: int | None = None,
        skipped: dict | None = None,
        start_offset: int | None = None,
    ) -> None:
        """Set next_offset if the lease epoch is still ours and the committed offset is still `expected`.

        `expected=None` means nothing was committed for this topic-partition. Raises CommitConflictError, or
        CommitFailedError when DynamoDB did not answer for good and the commit did not happen (or cannot be told).
        `dead_letters` (error class -> count) and `skipped` (reason -> offsets settled in no object and no dead
        letter) are added to the item's counters in the same transaction; `start_offset`, the range's first offset,
        is stored as `first_offset` by the first commit (`expected=None`) only.
        """
        self.commit_all(
            token,
            [OffsetCommit(tp, expected, next_offset, last_file, dead_letters, dlq_scan_from, skipped, start_offset)],
        )

    def commit_all(self, token: LeaseToken, commits: list[OffsetCommit]) -> None:
        """Commit every one of `commits` (at most MAX_COMMITS, distinct topic-partitions) in one transaction with one
        lease check: all of them, or none. Raises CommitConflictError naming the first topic-partition whose
        condition failed (the first of `commits` when only the lease check failed), or CommitFailedError naming the
        first of `commits` when DynamoDB did not answer for good and the transaction was not applied (or cannot be
        told).

        A retry of a transaction whose answer was lost carries the same ClientRequestToken (AWS then answers with
        the first try's outcome, for 10 minutes; moto ignores the token). Without that, the retry fails its
        conditions against this run's own write: before reporting a conflict, the first item is read back, and this
        epoch with this next offset is this run's transaction (applied whole: one epoch is one run, and a run commits
        a topic-partition once). A transaction DynamoDB cancels for a transient reason (a concurrent lease renewal:
        TransactionConflict; throttling) is sent again first (offsets/transactions.py).
        """
        if not 0 < len(commits) <= MAX_COMMITS:
            raise ValueError(f"a transaction commits 1 to {MAX_COMMITS} topic-partitions, not {len(commits)}")
        items = [token.fencing_check(self._table), *(self._update(token, commit) for commit in commits)]
        try:
            transact_write(self._db, items, self._sleep)
        except ClientError as e:
            if e.response["Error"]["Code"] != "TransactionCanceledException":
                return self._confirm(token, commits[0], e)
            if not self._holds(token, commits[0].tp, commits[0].next_offset):
                lost = _first_failed(e, commits)
                raise CommitConflictError(token.connector, lost.tp.topic, lost.tp.partition, lost.expected) from None
        except BotoCoreError as e:
            self._confirm(token, commits[0], e)

    def _confirm(self, token: LeaseToken, first: OffsetCommit, cause: Exception) -> None:
        """After the SDK's last try failed (its earlier tries may have been applied, their answers lost): return
        if the transaction happened all the same (its first commit holds), else raise CommitFailedError saying
        whether it did not happen."""
        try:
            committed = self._holds(token, first.tp, first.next_offset)
        except (ClientError, BotoCoreError):
            committed = None
        if not committed:
            raise CommitFailedError(
                token.connector, first.tp.topic, first.tp.partition, first.next_offset, committed, str(cause)
            ) from cause

    def _holds(self, token: LeaseToken, tp: TopicPartition, next_offset: int) -> bool:
        """Whether the offsets item holds this run's commit: this epoch (one run per epoch) and this offset."""
        item = self._item(token.connector, tp)
        return (item.get("epoch", {}).get("N"), item.get("next_offset", {}).get("N")) == (
            str(token.epoch),
            str(next_offset),
        )

    def _item(self, connector: str, tp: TopicPartition) -> dict:
        return self._db.get_item(TableName=self._table, Key=_key(connector, tp), ConsistentRead=True).get("Item", {})

    def _update(self, token: LeaseToken, commit: OffsetCommit) -> dict:
        """The conditional update of one offsets item."""
        tp, expected, last_file = commit.tp, commit.expected, commit.last_file
        offset_condition = "attribute_not_exists(next_offset)" if expected is None else "next_offset = :expected"
        values = {
            ":next": {"N": str(commit.next_offset)},
            ":epoch": {"N": str(token.epoch)},
            ":now": {"N": str(self._clock())},
            ":topic": {"S": tp.topic},
            ":partition": {"N": str(tp.partition)},
        }
        update = "SET next_offset = :next, epoch = :epoch, committed_at_ms = :now, topic = :topic, #p = :partition"
        if last_file is not None:
            values[":file"] = {"S": last_file}
            update += ", last_file = :file"
        if expected is not None:
            values[":expected"] = {"N": str(expected)}
        if commit.dlq_scan_from is not None:
            values[":scan"] = {"N": str(commit.dlq_scan_from)}
            update += ", dlq_scan_from = :scan"
        if expected is None and commit.start_offset is not None:  # the first commit records the range's start
            values[":first"] = {"N": str(commit.start_offset)}
            update += ", first_offset = :first"
        names = {"#p": "partition"}
        counters = {f"{layout.DEAD_LETTERS_PREFIX}{name}": n for name, n in (commit.dead_letters or {}).items()}
        counters.update({f"{layout.SKIPPED_PREFIX}{name}": n for name, n in (commit.skipped or {}).items()})
        added = sorted(counters.items())
        for i, (name, count) in enumerate(added):
            names[f"#c{i}"], values[f":c{i}"] = name, {"N": str(count)}
        if added:
            update += " ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(added)))
        return {
            "Update": {
                "TableName": self._table,
                "Key": _key(token.connector, tp),
                "UpdateExpression": update,
                "ConditionExpression": offset_condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        }


def _counters(item: dict, prefix: str) -> dict[str, int]:
    """The item's counters named `<prefix><name>`, by name."""
    return {name[len(prefix) :]: int(value["N"]) for name, value in item.items() if name.startswith(prefix)}


def _first_failed(error: ClientError, commits: list[OffsetCommit]) -> OffsetCommit:
    """The first commit whose condition the cancelled transaction reports failed (CancellationReasons hold one
    reason per item, in order: the lease check first); the first commit when none of theirs did."""
    reasons = error.response.get("CancellationReasons", [])[1:]
    failed = [c for c, reason in zip(commits, reasons) if reason.get("Code") == "ConditionalCheckFailed"]
    return (failed or commits)[0]
