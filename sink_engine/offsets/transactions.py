"""TransactWriteItems with DynamoDB's transient cancellations retried.

DynamoDB cancels a transaction that meets a concurrent write to one of its items (`TransactionConflict`: the
run's own lease renewal touches the lease item that every commit checks) or that it throttles inside
(`ThrottlingError`, `ProvisionedThroughputExceeded`), with TransactionCanceledException; botocore does not retry
that exception. Nothing of a cancelled transaction was applied, so it is sent again, under a new
ClientRequestToken, after a jittered backoff. A cancellation with any other reason (a failed condition) is the
caller's to judge.
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html (CancellationReasons).
moto never cancels for these reasons: tests inject them (devtools/faults/aws_proxy.py, kind `txn_conflict`).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable

from botocore.exceptions import ClientError

from sink_engine import events
from sink_engine.aws_types import DynamoDBClient

CANCELLED = "TransactionCanceledException"
TRANSIENT_REASONS = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"})
ATTEMPTS = 8
BASE_DELAY_S, MAX_DELAY_S = 0.05, 2.0


def transient(error: ClientError) -> bool:
    """Whether a TransactionCanceledException was cancelled only for transient reasons (no failed condition)."""
    if error.response.get("Error", {}).get("Code") != CANCELLED:
        return False
    codes = {reason.get("Code", "None") for reason in error.response.get("CancellationReasons", [])}
    return bool(codes & TRANSIENT_REASONS) and codes <= TRANSIENT_REASONS | {"None"}


def transact_write(
    db: DynamoDBClient, items: list[dict], sleep: Callable[[float], None] = time.sleep, attempts: int = ATTEMPTS
) -> None:
    """`transact_write_items(items)`, sent again (new token, full-jitter exponential backoff) while DynamoDB
    cancels it for transient reasons only; the last cancellation, and any other error, propagates."""
    for attempt in range(1, attempts + 1):
        try:
            db.transact_write_items(TransactItems=items, ClientRequestToken=str(uuid.uuid4()))
            return
        except ClientError as e:
            if attempt == attempts or not transient(e):
                raise
            reasons = [reason.get("Code", "None") for reason in e.response.get("CancellationReasons", [])]
            events.emit(events.TRANSACTION_RETRIED, attempt=attempt, reasons=reasons)
            sleep(random.uniform(0, min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (attempt - 1))))
