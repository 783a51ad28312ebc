"""The restore lease and the `RESTORED#` checkpoint (items declared in sink_engine/offsets/layout.py).

The checkpoint of a source topic in a target says what is known present there: the original offsets confirmed
(intervals per source partition, present.py) and the target offsets from which the rest must be scanned. It is
put, in a transaction with the lease's epoch check, when the first restore of the topic begins (the target's end
offsets, nothing present) and again at each confirm of a restore.

The lease is the run lease's protocol (offsets/lease.py) under `restore#<target topic>`: one restore into a
target at a time. A restore that finds it held waits until it is released or lapses (a killed restore's lease
lapses after `sink.lease.duration.ms`), for at most twice that long while one holder keeps it, then gives up
with LeaseHeldError (a new holder starts the wait again: another restore may take the lease as it lapses). Waiting
for the lapse is also what settles a killed restore's produce requests: a dead process sends nothing more, and
what it had sent was answered long before, so the tail the next restore scans no longer changes under it (the
producer's `message.timeout.ms` is kept well under the lease, so a live but stalled restore gives up its
unsent records before its lease can lapse).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from botocore.exceptions import ClientError

import sink_engine.offsets.layout as layout
from sink_engine.aws_types import DynamoDBClient
from sink_engine.errors import LeaseHeldError, SinkError
from sink_engine.offsets import Leases, LeaseToken
from sink_engine.offsets.transactions import transact_write
from sink_engine.restore.present import Present

POLL_S = 0.5
# The checkpoint's attributes at most (DynamoDB's item limit is 400 KB): one text of intervals per source partition,
# one number per target partition. 4,096 partitions on each side at 10-digit offsets, two intervals per source
# partition, take ~265 KB; ~15,000 intervals fit in all (~12,500 beside 4,096 target partitions); a source whose
# restored offsets are scattered does not fit.
MAX_CHECKPOINT_BYTES = 350_000


@dataclass(frozen=True)
class Checkpoint:
    """What a restore knows is in the target: the target's offsets from which to scan (by target partition), and
    the original offsets found or acknowledged before them (by source partition)."""

    scan_from: dict[int, int]
    present: dict[int, Present]

    def attributes(self) -> dict:
        return {
            "scan_from": {"M": {str(p): {"N": str(o)} for p, o in sorted(self.scan_from.items())}},
            "present": {
                "M": {str(p): {"S": offsets.text()} for p, offsets in sorted(self.present.items()) if len(offsets)}
            },
        }


def _item_bytes(attributes: dict) -> int:
    """An upper bound of the attributes' size as DynamoDB counts it: names and strings as UTF-8, a number as at
    most its decimal text + 1, 3 bytes per map and 1 per map entry. The item's key and other attributes are left
    to the margin between MAX_CHECKPOINT_BYTES and 400 KB."""
    size = 0
    for name, value in attributes.items():
        size += len(name.encode()) + 3
        for key, entry in value["M"].items():
            size += len(key.encode()) + 2 + len(next(iter(entry.values())).encode())
    return size


class RestoreLeaseLost(SinkError):
    """The restore lease changed hands while this restore held it: it stopped producing."""

    exit_code = 4


class RestoreLease:
    def __init__(
        self,
        dynamodb: DynamoDBClient,
        table: str,
        target_topic: str,
        duration_ms: int,
        clock: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self._db, self._table, self._clock = dynamodb, table, clock
        self.leases = Leases(dynamodb, table, clock)
        self.name = layout.restore_pk(target_topic)
        self.duration_ms = duration_ms

    def acquire(self, owner: str, on_wait: Callable[[str, int], None] = lambda owner, until: None) -> LeaseToken:
        """The lease, once it is free; `on_wait(holder, expires_at_ms)` when it has to wait. LeaseHeldError when one
        holder keeps it twice the lease duration (a live restore at work); a new holder (another restore took the
        lease as it lapsed, and may die too) starts the wait again."""
        told, give_up = None, 0
        while True:
            try:
                return self.leases.acquire(self.name, owner, self.duration_ms)
            except LeaseHeldError as held:
                if told != held.owner:
                    on_wait(held.owner, held.expires_at_ms)
                    told, give_up = held.owner, self._clock() + 2 * self.duration_ms
                elif self._clock() >= give_up:
                    raise
                time.sleep(POLL_S)

    def checkpoint(self, source_topic: str) -> Checkpoint | None:
        item = self._db.get_item(TableName=self._table, Key=self._key(source_topic), ConsistentRead=True).get("Item")
        if item is None:
            return None
        return Checkpoint(
            {int(p): int(v["N"]) for p, v in item["scan_from"]["M"].items()},
            {int(p): Present.from_text(v["S"]) for p, v in item.get("present", {"M": {}})["M"].items()},
        )

    def record(self, token: LeaseToken, source_topic: str, checkpoint: Checkpoint, first: bool = False) -> bool:
        """Put the checkpoint while the lease is ours (`first`: only if absent, the caller having read none under
        this lease). False, and nothing written, when it would pass MAX_CHECKPOINT_BYTES: the last one recorded
        stands (a rerun scans more of the target, never less)."""
        attributes = checkpoint.attributes()
        if _item_bytes(attributes) > MAX_CHECKPOINT_BYTES:
            return False
        put = {
            "TableName": self._table,
            "Item": {
                **self._key(source_topic),
                "epoch": {"N": str(token.epoch)},
                "recorded_at_ms": {"N": str(self._clock())},
                **attributes,
            },
        }
        if first:
            put["ConditionExpression"] = "attribute_not_exists(sk)"
        try:
            transact_write(self._db, [token.fencing_check(self._table), {"Put": put}])
        except ClientError as e:
            if e.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            also = f", or another restore recorded {layout.restored_sk(source_topic)}" if first else ""
            raise RestoreLeaseLost(
                f"the restore lease {self.name} is no longer this restore's (epoch "
                f"{token.epoch}){also}; a rerun goes on from the last checkpoint"
            ) from None
        return True

    def _key(self, source_topic: str) -> dict:
        return layout.key(self.name, layout.restored_sk(source_topic))
