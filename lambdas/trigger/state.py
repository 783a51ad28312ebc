"""The trigger's view of the offsets table: committed offsets, its own pending markers, the lease, the run claim.

Items (`sink_engine.offsets.layout`): the engine's `LEASE` and `OFFSET#` (read only here), and the trigger's
`TRIGGER#` markers and `RUN` claim. Only MSK batches write markers, one topic's partitions each, and Lambda hands
a partition's batches to one invocation at a time, so markers need no condition; the claim does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, overload

from botocore.exceptions import ClientError

from lambdas.trigger.pending import Committed, Seen, TopicPartition
from sink_engine.offsets import layout

if TYPE_CHECKING:
    from sink_engine.aws_types import DynamoDBClient

SUCCEEDED, FAILED, IDLE = "succeeded", "failed", "idle"  # outcomes of a claim's run
RESTARTED = "restarted"  # a continuous run the trigger cancelled itself (a new config, an opt-out): no failure


@dataclass(frozen=True)
class Lease:
    epoch: int
    expires_at_ms: int

    def held(self, now_ms: int) -> bool:
        return self.expires_at_ms > now_ms


@dataclass(frozen=True)
class RunClaim:
    """A run the trigger asked for: attempt number (the client token's seed), the lease epoch it saw, when it was
    claimed and until when, the EMR job run id once StartJobRun answered, the consecutive failed runs before it,
    and once its run ended, the outcome (succeeded | failed | idle: took the lease but committed nothing) and
    when the trigger saw it; `sizes`, the `--conf`s of the run's workers (sizing.py), so that a resumed
    StartJobRun repeats the first one's request (None: a claim written before runs were sized). A continuous run's
    claim (lambdas/trigger/continuous.py) also keeps the `fingerprint` of what it runs (config, job, workers; None for
    a bounded run's), and once the trigger cancelled its run, when and why (`cancelled_at_ms`, `cancel_reason`). A
    bounded run's claim, once its connector is put in a job run (lambdas/trigger/batches.py), keeps that run's client
    token (`batch`) and the configs it runs (`configs`, in order: one, or every connector of a batched run), written
    before StartJobRun so that a resumed start repeats the request; None and () before."""

    attempt: int
    lease_epoch: int
    claimed_at_ms: int
    expires_at_ms: int
    job_run_id: str | None = None
    failures_before: int = 0
    outcome: str | None = None
    settled_at_ms: int | None = None
    sizes: str | None = None
    fingerprint: str | None = None
    cancelled_at_ms: int | None = None
    cancel_reason: str | None = None
    batch: str | None = None
    configs: tuple[str, ...] = ()

    @property
    def continuous(self) -> bool:
        return self.fingerprint is not None

    @property
    def failures(self) -> int:
        """Consecutive failed runs up to this claim, its own outcome counted once settled."""
        if self.outcome is None:
            return self.failures_before
        return 0 if self.outcome in (SUCCEEDED, RESTARTED) else self.failures_before + 1


class TriggerState:
    def __init__(self, dynamodb: DynamoDBClient, table: str) -> None:
        self._db, self._table = dynamodb, table

    def committed(self, connector: str) -> dict[TopicPartition, Committed]:
        return {
            (i["topic"]["S"], int(i["partition"]["N"])): Committed(
                int(i["next_offset"]["N"]), _number(i, "committed_at_ms", 0)
            )
            for i in self._items(connector, layout.OFFSET_PREFIX)
        }

    def markers(self, connector: str) -> dict[TopicPartition, Seen]:
        found = {}
        for item in self._items(connector, layout.TRIGGER_PREFIX):
            found[layout.topic_partition(item[layout.SK]["S"])] = Seen(
                int(item["next_offset"]["N"]),
                _number(item, "first_offset"),
                _number(item, "first_ts_ms"),
                _number(item, "newest_ts_ms"),
            )
        return found

    def save_markers(self, connector: str, markers: dict[TopicPartition, Seen]) -> None:
        """Write markers 25 to a BatchWriteItem, retrying what DynamoDB leaves unprocessed."""
        requests = [{"PutRequest": {"Item": _marker_item(connector, tp, seen)}} for tp, seen in sorted(markers.items())]
        for start in range(0, len(requests), 25):
            pending, wait = {self._table: requests[start : start + 25]}, 0.05
            while pending:
                pending = self._db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
                if pending:
                    time.sleep(wait)
                    wait = min(wait * 2, 1.0)

    def lease(self, connector: str) -> Lease | None:
        item = self._get(connector, layout.LEASE_SK)
        return Lease(int(item["epoch"]["N"]), int(item["expires_at_ms"]["N"])) if item else None

    def claim(self, connector: str) -> RunClaim | None:
        item = self._get(connector, layout.RUN_SK)
        if not item:
            return None
        return RunClaim(
            int(item["attempt"]["N"]),
            int(item["lease_epoch"]["N"]),
            _number(item, "claimed_at_ms", 0),
            int(item["expires_at_ms"]["N"]),
            item.get("job_run_id", {}).get("S"),
            _number(item, "failures_before", 0),
            item.get("outcome", {}).get("S"),
            _number(item, "settled_at_ms"),
            item.get("sizes", {}).get("S"),
            item.get("fingerprint", {}).get("S"),
            _number(item, "cancelled_at_ms"),
            item.get("cancel_reason", {}).get("S"),
            item.get("batch", {}).get("S"),
            tuple(c["S"] for c in item.get("configs", {}).get("L", [])),
        )

    def put_claim(self, connector: str, claim: RunClaim, previous_attempt: int | None) -> bool:
        """Write a new claim if the stored attempt is still `previous_attempt` (None: no claim). False if raced."""
        condition = "attribute_not_exists(sk)" if previous_attempt is None else "attempt = :previous"
        values = {} if previous_attempt is None else {":previous": {"N": str(previous_attempt)}}
        item = {
            **layout.key(connector, layout.RUN_SK),
            "attempt": {"N": str(claim.attempt)},
            "lease_epoch": {"N": str(claim.lease_epoch)},
            "claimed_at_ms": {"N": str(claim.claimed_at_ms)},
            "expires_at_ms": {"N": str(claim.expires_at_ms)},
            "failures_before": {"N": str(claim.failures_before)},
            **({"sizes": {"S": claim.sizes}} if claim.sizes is not None else {}),
            **({"fingerprint": {"S": claim.fingerprint}} if claim.fingerprint is not None else {}),
        }
        written = self._conditional(
            lambda: self._db.put_item(
                TableName=self._table,
                Item=item,
                ConditionExpression=condition,
                **({"ExpressionAttributeValues": values} if values else {}),
            )
        )
        return written or self.claim(connector) == claim  # a retried write that met its own first try

    def record_job_run(self, connector: str, attempt: int, job_run_id: str) -> None:
        self._conditional(
            lambda: self._db.update_item(
                TableName=self._table,
                Key=layout.key(connector, layout.RUN_SK),
                UpdateExpression="SET job_run_id = :id",
                ConditionExpression="attempt = :attempt",
                ExpressionAttributeValues={":id": {"S": job_run_id}, ":attempt": {"N": str(attempt)}},
            )
        )

    def record_batch(self, connector: str, claim: RunClaim, token: str, configs: tuple[str, ...], sizes: str) -> bool:
        """Put the claim's connector in the job run of client token `token` running `configs` on the workers `sizes`,
        before StartJobRun; False when the claim moved on meanwhile (another attempt, or its run's id recorded)."""
        return self._conditional(
            lambda: self._db.update_item(
                TableName=self._table,
                Key=layout.key(connector, layout.RUN_SK),
                UpdateExpression="SET #batch = :token, #configs = :configs, #sizes = :sizes",
                ConditionExpression="attempt = :attempt AND attribute_not_exists(job_run_id)",
                ExpressionAttributeNames={"#batch": "batch", "#configs": "configs", "#sizes": "sizes"},
                ExpressionAttributeValues={
                    ":token": {"S": token},
                    ":configs": {"L": [{"S": c} for c in configs]},
                    ":sizes": {"S": sizes},
                    ":attempt": {"N": str(claim.attempt)},
                },
            )
        ) or self.claim(connector) == replace(claim, batch=token, configs=configs, sizes=sizes)

    def mark_cancelled(self, connector: str, claim: RunClaim, reason: str, now_ms: int) -> RunClaim:
        """Record that the trigger cancelled the claim's run (its outcome will be RESTARTED, not a failure); the claim
        as stored after (unchanged when another claim or outcome took its place meanwhile)."""
        self._conditional(
            lambda: self._db.update_item(
                TableName=self._table,
                Key=layout.key(connector, layout.RUN_SK),
                UpdateExpression="SET cancelled_at_ms = :now, cancel_reason = :reason",
                ConditionExpression="attempt = :attempt AND attribute_not_exists(outcome)",
                ExpressionAttributeValues={
                    ":now": {"N": str(now_ms)},
                    ":reason": {"S": reason},
                    ":attempt": {"N": str(claim.attempt)},
                },
            )
        )
        return self.claim(connector) or claim

    def settle(self, connector: str, claim: RunClaim, outcome: str, now_ms: int) -> RunClaim | None:
        """Record the outcome of the claim's run once; the settled claim, or None if another writer moved on."""
        settled = replace(claim, outcome=outcome, settled_at_ms=now_ms)
        written = self._conditional(
            lambda: self._db.update_item(
                TableName=self._table,
                Key=layout.key(connector, layout.RUN_SK),
                UpdateExpression="SET outcome = :outcome, settled_at_ms = :now",
                ConditionExpression="attempt = :attempt AND attribute_not_exists(outcome)",
                ExpressionAttributeValues={
                    ":outcome": {"S": outcome},
                    ":now": {"N": str(now_ms)},
                    ":attempt": {"N": str(claim.attempt)},
                },
            )
        )
        if written:
            return settled
        stored = self.claim(connector)  # settled by a concurrent invocation (or our own retried write)
        return stored if stored and stored.attempt == claim.attempt and stored.outcome else None

    def _get(self, connector: str, sk: str) -> dict | None:
        return self._db.get_item(TableName=self._table, Key=layout.key(connector, sk), ConsistentRead=True).get("Item")

    def _items(self, connector: str, prefix: str) -> Iterator[dict]:
        return layout.items_under(self._db, self._table, connector, prefix)

    @staticmethod
    def _conditional(write: Callable[[], object]) -> bool:
        try:
            write()
            return True
        except ClientError as e:
            if e.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise


@overload
def _number(item: dict, name: str) -> int | None: ...


@overload
def _number(item: dict, name: str, default: int) -> int: ...


def _number(item: dict, name: str, default: int | None = None) -> int | None:
    return int(item[name]["N"]) if name in item else default


def _marker_item(connector: str, tp: TopicPartition, seen: Seen) -> dict:
    item = {**layout.key(connector, layout.trigger_sk(*tp)), "next_offset": {"N": str(seen.next_offset)}}
    for name in ("first_offset", "first_ts_ms", "newest_ts_ms"):
        value = getattr(seen, name)
        if value is not None:
            item[name] = {"N": str(value)}
    return item
