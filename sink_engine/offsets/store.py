"""Committed offsets: read them, and commit one topic-partition under the lease's fencing token."""
from __future__ import annotations

from typing import Callable

from botocore.exceptions import ClientError

from sink_engine.errors import CommitConflictError
from sink_engine.model import CommittedOffset, TopicPartition
from sink_engine.offsets.lease import LEASE_SK, LeaseToken

OFFSET_PREFIX = "OFFSET#"
DEAD_LETTERS_PREFIX = "dead_letters."  # attributes counting dead letters by error class


def offset_sk(tp: TopicPartition) -> str:
    return f"{OFFSET_PREFIX}{tp.topic}#{tp.partition}"


class OffsetStore:
    def __init__(self, dynamodb, table: str, clock: Callable[[], int]):
        self._db, self._table, self._clock = dynamodb, table, clock

    def committed(self, connector: str) -> dict[TopicPartition, CommittedOffset]:
        """Every committed offset of the connector (strongly consistent)."""
        found: dict[TopicPartition, CommittedOffset] = {}
        kwargs = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": connector}, ":prefix": {"S": OFFSET_PREFIX}},
            "ConsistentRead": True,
        }
        while True:
            page = self._db.query(**kwargs)
            for item in page["Items"]:
                tp = TopicPartition(item["topic"]["S"], int(item["partition"]["N"]))
                found[tp] = CommittedOffset(
                    next_offset=int(item["next_offset"]["N"]),
                    committed_at_ms=int(item["committed_at_ms"]["N"]),
                    last_file=item.get("last_file", {}).get("S"),
                    dead_letters={name[len(DEAD_LETTERS_PREFIX):]: int(value["N"]) for name, value in item.items()
                                  if name.startswith(DEAD_LETTERS_PREFIX)},
                )
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def dlq_scan_from(self, connector: str, tp: TopicPartition) -> int | None:
        """The dead-letter topic position stored with the last commit of `tp` (see sink_engine.dlq)."""
        item = self._db.get_item(TableName=self._table, Key={"pk": {"S": connector}, "sk": {"S": offset_sk(tp)}},
                                 ConsistentRead=True).get("Item", {})
        return int(item["dlq_scan_from"]["N"]) if "dlq_scan_from" in item else None

    def commit(
        self, token: LeaseToken, tp: TopicPartition, expected: int | None, next_offset: int, last_file: str | None,
        dead_letters: dict | None = None, dlq_scan_from: int | None = None,
    ) -> None:
        """Set next_offset if the lease epoch is still ours and the committed offset is still `expected`.

        `expected=None` means nothing was committed for this topic-partition. Raises CommitConflictError.
        `dead_letters` (error class -> count) are added to the item's counters in the same transaction.
        """
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
        names = {"#p": "partition"}
        counters = sorted((dead_letters or {}).items())
        for i, (error_class, count) in enumerate(counters):
            names[f"#dl{i}"], values[f":dl{i}"] = f"{DEAD_LETTERS_PREFIX}{error_class}", {"N": str(count)}
        if counters:
            update += " ADD " + ", ".join(f"#dl{i} :dl{i}" for i in range(len(counters)))
        try:
            self._db.transact_write_items(
                TransactItems=[
                    {"ConditionCheck": {
                        "TableName": self._table,
                        "Key": {"pk": {"S": token.connector}, "sk": {"S": LEASE_SK}},
                        "ConditionExpression": "epoch = :epoch",
                        "ExpressionAttributeValues": {":epoch": {"N": str(token.epoch)}},
                    }},
                    {"Update": {
                        "TableName": self._table,
                        "Key": {"pk": {"S": token.connector}, "sk": {"S": offset_sk(tp)}},
                        "UpdateExpression": update,
                        "ConditionExpression": offset_condition,
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": values,
                    }},
                ]
            )
        except ClientError as e:
            if e.response["Error"]["Code"] == "TransactionCanceledException":
                raise CommitConflictError(token.connector, tp.topic, tp.partition, expected) from None
            raise
