"""The per-connector run lease: a conditional put that bumps an epoch fencing token."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from botocore.exceptions import ClientError

import sink_engine.offsets.layout as layout
from sink_engine import events
from sink_engine.aws_types import DynamoDBClient
from sink_engine.errors import LeaseHeldError


@dataclass(frozen=True)
class LeaseToken:
    connector: str
    owner: str
    epoch: int

    def fencing_check(self, table: str) -> dict:
        """The transaction item that holds the run's other writes to the lease epoch still being this token's."""
        return {
            "ConditionCheck": {
                "TableName": table,
                "Key": layout.key(self.connector, layout.LEASE_SK),
                "ConditionExpression": "epoch = :epoch",
                "ExpressionAttributeValues": {":epoch": {"N": str(self.epoch)}},
            }
        }


class Leases:
    """Take, renew and release the lease of a connector. `clock` returns epoch milliseconds."""

    def __init__(self, dynamodb: DynamoDBClient, table: str, clock: Callable[[], int]) -> None:
        self._db, self._table, self._clock = dynamodb, table, clock

    def acquire(self, connector: str, owner: str, duration_ms: int) -> LeaseToken:
        """Take the lease if it is absent or expired, with epoch + 1. Raises LeaseHeldError otherwise.

        `owner` must be unique per run: when the SDK retried the put after a lost answer and the retry failed its
        condition, the item is read back and a holder with this owner and epoch is this run's own first try.
        Renewal and release need no such check: their condition (this epoch and owner) holds again on a retry."""
        current = self.describe(connector)
        now = self._clock()
        if current and current["expires_at_ms"] > now:
            raise held_error(connector, current, now)
        epoch = (current["epoch"] if current else 0) + 1
        condition = "attribute_not_exists(pk)" if not current else "epoch = :old AND expires_at_ms <= :now"
        values = {} if not current else {":old": {"N": str(current["epoch"])}, ":now": {"N": str(now)}}
        try:
            self._db.put_item(
                TableName=self._table,
                Item={
                    **layout.key(connector, layout.LEASE_SK),
                    "owner": {"S": owner},
                    "epoch": {"N": str(epoch)},
                    "expires_at_ms": {"N": str(now + duration_ms)},
                    "acquired_at_ms": {"N": str(now)},
                },
                ConditionExpression=condition,
                **({"ExpressionAttributeValues": values} if values else {}),
            )
        except ClientError as e:
            if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            winner = self.describe(connector) or {"owner": "unknown", "epoch": 0, "expires_at_ms": 0}
            if (winner["owner"], winner["epoch"]) != (owner, epoch):  # else a retry met its own first try's put
                raise held_error(connector, winner, self._clock()) from None
        events.emit(events.LEASE_ACQUIRED, connector=connector, owner=owner, epoch=epoch)
        return LeaseToken(connector, owner, epoch)

    def renew(self, token: LeaseToken, duration_ms: int) -> bool:
        """Extend the lease, recording when (`renewed_at_ms`: a holder whose renewals stopped is told from a live one);
        False when it is no longer ours."""
        now = self._clock()
        return self._set_if_held(token, {"expires_at_ms": now + duration_ms, "renewed_at_ms": now})

    def release(self, token: LeaseToken) -> bool:
        """Let the lease lapse now, keeping the epoch; False when it was no longer ours."""
        released = self._set_if_held(token, {"expires_at_ms": 0})
        if released:
            events.emit(events.LEASE_RELEASED, connector=token.connector, owner=token.owner, epoch=token.epoch)
        return released

    def describe(self, connector: str) -> dict | None:
        item = self._db.get_item(
            TableName=self._table, Key=layout.key(connector, layout.LEASE_SK), ConsistentRead=True
        ).get("Item")
        if not item:
            return None
        return {
            "owner": item["owner"]["S"],
            "epoch": int(item["epoch"]["N"]),
            "expires_at_ms": int(item["expires_at_ms"]["N"]),
            # the holder's last sign of life: its last renewal, else when it took the lease (items of older runs: none)
            "alive_at_ms": int(item.get("renewed_at_ms", item.get("acquired_at_ms", {"N": "0"}))["N"]) or None,
            "stop_requested": "stop_requested_at_ms" in item,
        }

    def request_stop(self, token: LeaseToken) -> bool:
        """Ask the holder's long-lived tasks to stop (a continuous run's SIGTERM): they commit what they closed and
        end. The next acquire's put clears it. False when the lease is no longer ours."""
        return self._set_if_held(token, {"stop_requested_at_ms": self._clock()})

    def _set_if_held(self, token: LeaseToken, numbers: dict[str, int]) -> bool:
        """Set numbers of the lease item if its epoch and owner are still `token`'s; False when they are not."""
        names = {f"#a{i}": name for i, name in enumerate(numbers)}
        values = {f":v{i}": {"N": str(value)} for i, value in enumerate(numbers.values())}
        try:
            self._db.update_item(
                TableName=self._table,
                Key=layout.key(token.connector, layout.LEASE_SK),
                UpdateExpression="SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(numbers))),
                ConditionExpression="epoch = :epoch AND #owner = :owner",
                ExpressionAttributeNames={"#owner": "owner", **names},
                ExpressionAttributeValues={
                    **values,
                    ":epoch": {"N": str(token.epoch)},
                    ":owner": {"S": token.owner},
                },
            )
            return True
        except ClientError as e:
            if e.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise


def held_error(connector: str, holder: dict, now_ms: int) -> LeaseHeldError:
    """The error of a lease `holder` (as `Leases.describe` gives it) still holds at `now_ms`. Its renewals stopped
    when its last sign of life is older than half of the lease (LeaseKeeper renews every third of it, restores every
    fifth): it has most likely crashed, and its lease lapses by itself."""
    alive_at = holder.get("alive_at_ms")
    duration = holder["expires_at_ms"] - alive_at if alive_at else None
    silent_ms = now_ms - alive_at if alive_at else None
    stopped = silent_ms is not None and duration is not None and silent_ms > duration / 2
    return LeaseHeldError(connector, holder["owner"], holder["expires_at_ms"], now_ms, silent_ms, stopped)


class LeaseKeeper:
    """Renews a lease `renewals_per_lease` times per duration (renewal starts that far apart) on a daemon thread
    until stopped.

    `held_for()` is how long the lease is surely still this holder's: its duration counted from the start of the
    last renewal that succeeded, on this process's monotonic clock (until the first one, from `held_since`: a
    `time.monotonic()` taken before the lease was acquired; by default when the keeper was made, which only a holder
    that does not ask may take); 0 once a renewal found the lease taken. What a holder does that only its lease
    fences (a restore's produce, which no epoch check guards) it does while `held_for()` exceeds what the action can
    take."""

    def __init__(
        self,
        leases: Leases,
        token: LeaseToken,
        duration_ms: int,
        held_since: float | None = None,
        renewals_per_lease: int = 3,
    ):
        self._leases, self._token, self._duration_ms = leases, token, duration_ms
        self._every_s = duration_ms / 1000 / renewals_per_lease
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lease-keeper", daemon=True)
        self._held_until = (held_since if held_since is not None else time.monotonic()) + duration_ms / 1000
        self.lost = False

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def held_for(self) -> float:
        """Seconds during which no other holder can take the lease (see the class docstring)."""
        return 0.0 if self.lost else self._held_until - time.monotonic()

    def _loop(self) -> None:
        started = time.monotonic()
        while not self._stop.wait(max(0.0, started + self._every_s - time.monotonic())):
            started = time.monotonic()
            try:
                if not self._leases.renew(self._token, self._duration_ms):
                    self.lost = True
                    return
            except Exception:  # a failed renewal is retried next tick; the commit's fencing keeps us safe
                continue
            self._held_until = started + self._duration_ms / 1000
