"""Creation and presence checks of the offsets table."""

from __future__ import annotations

from botocore.exceptions import ClientError

from sink_engine.aws_types import DynamoDBClient
from sink_engine.offsets.layout import PK, SK


def table_exists(dynamodb: DynamoDBClient, table: str) -> bool:
    try:
        dynamodb.describe_table(TableName=table)
        return True
    except ClientError as e:
        if e.response["Error"]["Code"] == "ResourceNotFoundException":
            return False
        raise


def ensure_table(dynamodb: DynamoDBClient, table: str) -> bool:
    """Create the table (on-demand, string keys `layout.PK`, `layout.SK`) if it is missing and wait until it is active.

    Returns True when it created the table. Idempotent.
    """
    if table_exists(dynamodb, table):
        return False
    try:
        dynamodb.create_table(
            TableName=table,
            AttributeDefinitions=[
                {"AttributeName": PK, "AttributeType": "S"},
                {"AttributeName": SK, "AttributeType": "S"},
            ],
            KeySchema=[{"AttributeName": PK, "KeyType": "HASH"}, {"AttributeName": SK, "KeyType": "RANGE"}],
            BillingMode="PAY_PER_REQUEST",
        )
    except ClientError as e:
        if e.response["Error"]["Code"] != "ResourceInUseException":
            raise
        return False
    dynamodb.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    return True
