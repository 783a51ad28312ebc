"""Replay progress in the connector's offsets table: one `REPLAY#` item per replayed dead letter, keyed by
its original record (`sink_engine.offsets.layout`).

Its `state` is `claimed` before the record is produced, `replayed` once the producer confirmed it. A claim is a
conditional put, so two invocations never both replay a record; a record left `claimed` (the invocation died
between claim and confirmation) is never replayed again automatically and is reported as in doubt. A claim whose
answer was lost is retried by the SDK and fails its condition against its own first try: the item's `claim_id`
tells it apart from another invocation's claim.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from botocore.exceptions import ClientError

from sink_engine.aws_types import DynamoDBClient
from sink_engine.dlq.letter import DeadLetter
from sink_engine.offsets import layout

CLAIMED, REPLAYED = "claimed", "replayed"


class ReplayProgress:
    def __init__(self, dynamodb: DynamoDBClient, table: str, connector: str, clock: Callable[[], int]) -> None:
        self._db, self._table, self._connector, self._clock = dynamodb, table, connector, clock
        self._claim_id = uuid.uuid4().hex

    def state(self, letter: DeadLetter) -> str | None:
        item = self._item(letter)
        return item["state"]["S"] if item else None

    def claim(self, letter: DeadLetter, target_topic: str) -> str | None:
        """Claim the record for this invocation; None when claimed, else the state found (not replayable)."""
        try:
            self._db.put_item(
                TableName=self._table,
                Item={
                    **self._key(letter),
                    "state": {"S": CLAIMED},
                    "error_class": {"S": letter.error_class},
                    "target_topic": {"S": target_topic},
                    "claimed_at_ms": {"N": str(self._clock())},
                    "claim_id": {"S": self._claim_id},
                },
                ConditionExpression="attribute_not_exists(sk)",
            )
            return None
        except ClientError as e:
            if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            item = self._item(letter) or {}
            if item.get("claim_id", {}).get("S") == self._claim_id and item["state"]["S"] == CLAIMED:
                return None  # our own claim, met by the SDK's retry of it
            return item["state"]["S"] if item else CLAIMED

    def mark_replayed(self, letters: list[DeadLetter]) -> None:
        now = {"N": str(self._clock())}
        for letter in letters:
            self._db.update_item(
                TableName=self._table,
                Key=self._key(letter),
                UpdateExpression="SET #s = :done, replayed_at_ms = :now",
                ExpressionAttributeNames={"#s": "state"},
                ExpressionAttributeValues={":done": {"S": REPLAYED}, ":now": now},
            )

    def _item(self, letter: DeadLetter) -> dict | None:
        return self._db.get_item(TableName=self._table, Key=self._key(letter), ConsistentRead=True).get("Item")

    def _key(self, letter: DeadLetter) -> dict:
        return layout.key(self._connector, layout.replay_sk(letter.topic, letter.partition, letter.offset))
