"""DynamoDB as a run uses it: the offsets table's description (the run checks the table first), a consistent read
of the connector's lease item (a run's first read), and a write that proves UpdateItem without changing anything.

The write is an UpdateItem of the lease item conditioned on `pk = :never`, where `:never` is not the connector's
name: the item under the connector's key has that name as `pk`, or does not exist (a comparison with a missing
attribute is false), so the condition is false by construction and DynamoDB answers
ConditionalCheckFailedException, writing nothing ("Condition expressions", Amazon DynamoDB Developer Guide:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html). The
request is authorized before its condition is evaluated, so ConditionalCheckFailed shows dynamodb:UpdateItem is
allowed on this key (the job role's grant is limited to the connector's partition key, `dynamodb:LeadingKeys`),
while AccessDeniedException shows it is not. A failed conditional write still consumes write capacity
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html): one unit.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

import sink_engine.offsets.layout as layout
from sink_engine.aws import dynamodb_client
from sink_engine.aws_types import DynamoDBClient
from sink_engine.doctor import grants
from sink_engine.doctor.checks import Check, Failed
from sink_engine.offsets import Leases
from sink_engine.offsets.lease import held_error

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context


def table(context: Context) -> str:
    name = context.settings.run.offsets_table
    try:
        with _named(context, "table"):
            described = _client(context).describe_table(TableName=name)["Table"]
    except ClientError as e:
        if grants.error_code(e) == "ResourceNotFoundException":
            raise Failed(
                f"table {name} does not exist (offset.storage.dynamodb.table); `sink-engine init` or the "
                "stack creates it"
            ) from None
        raise
    keys = {k["AttributeName"]: k["KeyType"] for k in described["KeySchema"]}
    if keys != {layout.PK: "HASH", layout.SK: "RANGE"}:
        raise Failed(f"table {name} has keys {keys}, not the offsets table's ({layout.PK} HASH, {layout.SK} RANGE)")
    return f"table {name}: {described['TableStatus']}"


def lease(context: Context) -> str:
    """The lease item, read as a run reads it: free, or who holds it until when and whether it still renews it."""
    run = context.settings.run
    now = int(time.time() * 1000)
    with _named(context, "lease item"):
        holder = Leases(_client(context), run.offsets_table, lambda: now).describe(run.connector)
    if holder is None:
        return f"no lease item for {run.connector}: no run has started yet"
    if holder["expires_at_ms"] <= now:
        return f"lease of {run.connector}: free (epoch {holder['epoch']}, last held by run {holder['owner']})"
    return f"lease of {run.connector}: epoch {holder['epoch']}, held by {held_error(run.connector, holder, now).situation()}"


def conditional_write(context: Context) -> str:
    run = context.settings.run
    try:
        with _named(context, "lease item"):
            _client(context).update_item(
                TableName=run.offsets_table,
                Key=layout.key(run.connector, layout.LEASE_SK),
                UpdateExpression="SET #probe = :never",
                ConditionExpression="#pk = :never",
                ExpressionAttributeNames={"#pk": layout.PK, "#probe": "doctor_probe"},
                ExpressionAttributeValues={":never": {"S": f"{run.connector}#doctor"}},
            )
    except ClientError as e:
        if grants.error_code(e) == "ConditionalCheckFailedException":
            return "UpdateItem of the lease item is allowed (its condition is false by construction: nothing written)"
        raise
    raise Failed(
        f"UpdateItem of {run.connector}'s lease item succeeded where its condition cannot hold: "
        "the table is not DynamoDB as the engine knows it"
    )


@contextmanager
def _named(context: Context, what: str) -> Iterator[None]:
    """A refused call as Failed naming the table (and the item: the grant is per partition key)."""
    run = context.settings.run
    try:
        yield
    except ClientError as e:
        if not grants.is_denied(e):
            raise
        item = f" ({what} of {layout.PK}={run.connector})" if what != "table" else ""
        raise Failed(grants.describe(e, "dynamodb", f"table {run.offsets_table}{item}")) from None


def _client(context: Context) -> DynamoDBClient:
    return dynamodb_client(context.settings.run.region)


CHECKS = (
    Check("dynamodb table", table, service="dynamodb"),
    Check("dynamodb lease", lease, service="dynamodb"),
    Check("dynamodb conditional write", conditional_write, service="dynamodb"),
)
