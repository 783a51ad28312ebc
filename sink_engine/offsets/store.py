"""Committed offsets: read them, and commit one topic-partition under the lease's fencing token."""
from __future__ import annotations

from typing import Callable

from botocore.exceptions import ClientError

from sink_engine.errors import CommitConflictError
from sink_engine.model import CommittedOffset, TopicPartition
from sink_engine.offsets.lease import LEASE_SK, LeaseToken

OFFSET_PREFIX = "OFFSET#"


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
                )
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def commit(
        self, token: LeaseToken, tp: TopicPartition, expected: int | None, next_offset: int, last_file: str | None
    ) -> None:
        """Set next_offset if the lease epoch is still ours and the committed offset is still `expected`.

        `expected=None` means nothing was committed for this topic-partition. Raises CommitConflictError.
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
                        "ExpressionAttributeNames": {"#p": "partition"},
                        "ExpressionAttributeValues": values,
                    }},
                ]
            )
        except ClientError as e:
            if e.response["Error"]["Code"] == "TransactionCanceledException":
                raise CommitConflictError(token.connector, tp.topic, tp.partition, expected) from None
            raise
