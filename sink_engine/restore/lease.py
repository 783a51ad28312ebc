"""The restore lease and the `RESTORED#` checkpoint (items declared in sink_engine/offsets/layout.py).

The lease is the run lease's protocol (offsets/lease.py) under `restore#<target topic>`: one restore into a
target at a time. A restore that finds it held waits until it is released or lapses (a killed restore's lease
lapses after `sink.lease.duration.ms`), for at most twice that long, then gives up with LeaseHeldError. Waiting
for the lapse is also what settles a killed restore's produce requests: a dead process sends nothing more, and
what it had sent was answered long before, so the tail the next restore scans no longer changes under it (the
producer's `message.timeout.ms` is kept well under the lease, so a live but stalled restore gives up its
unsent records before its lease can lapse).
"""
from __future__ import annotations

import time
from typing import Callable

from botocore.exceptions import ClientError

import sink_engine.offsets.layout as layout
from sink_engine.errors import LeaseHeldError, SinkError
from sink_engine.offsets import LeaseToken, Leases
from sink_engine.offsets.transactions import transact_write

POLL_S = 0.5


class RestoreLeaseLost(SinkError):
    """The restore lease changed hands while this restore held it: it stopped producing."""

    exit_code = 4


class RestoreLease:
    def __init__(self, dynamodb, table: str, target_topic: str, duration_ms: int,
                 clock: Callable[[], int] = lambda: int(time.time() * 1000)):
        self._db, self._table, self._clock = dynamodb, table, clock
        self.leases = Leases(dynamodb, table, clock)
        self.name = layout.restore_pk(target_topic)
        self.duration_ms = duration_ms

    def acquire(self, owner: str, on_wait: Callable[[str, int], None] = lambda owner, until: None) -> LeaseToken:
        """The lease, once it is free; `on_wait(holder, expires_at_ms)` when it has to wait."""
        give_up = self._clock() + 2 * self.duration_ms
        told = None
        while True:
            try:
                return self.leases.acquire(self.name, owner, self.duration_ms)
            except LeaseHeldError as held:
                if self._clock() >= give_up:
                    raise
                if told != held.owner:
                    on_wait(held.owner, held.expires_at_ms)
                    told = held.owner
                time.sleep(POLL_S)

    def scan_from(self, source_topic: str) -> dict[int, int] | None:
        item = self._db.get_item(TableName=self._table, Key=self._key(source_topic),
                                 ConsistentRead=True).get("Item")
        if item is None:
            return None
        return {int(p): int(v["N"]) for p, v in item["scan_from"]["M"].items()}

    def record_scan_from(self, token: LeaseToken, source_topic: str, ends: dict[int, int]) -> None:
        """Put the checkpoint (absent before: the caller read it under this lease), while the lease is ours."""
        try:
            transact_write(self._db, [token.fencing_check(self._table), {"Put": {
                "TableName": self._table,
                "Item": {**self._key(source_topic), "epoch": {"N": str(token.epoch)},
                         "created_at_ms": {"N": str(self._clock())},
                         "scan_from": {"M": {str(p): {"N": str(o)} for p, o in sorted(ends.items())}}},
                "ConditionExpression": "attribute_not_exists(sk)"}}])
        except ClientError as e:
            if e.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            raise RestoreLeaseLost(f"the restore lease {self.name} is no longer this restore's (epoch "
                                   f"{token.epoch}), or another restore recorded {layout.restored_sk(source_topic)}; "
                                   "nothing was produced") from None

    def _key(self, source_topic: str) -> dict:
        return layout.key(self.name, layout.restored_sk(source_topic))
