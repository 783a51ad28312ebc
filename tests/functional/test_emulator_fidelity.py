"""The test world's moto behaves as DynamoDB where the engine depends on it (docs/aws-fidelity.md): an item's write
is seen whole or not at all by a concurrent read, even the first write of an item by UpdateItem, which moto applies
by putting the key alone and then setting the attributes (devtools/moto_server.py serializes the item operations).
Checked in-process, with the update held between the two steps while another thread queries."""

from __future__ import annotations

import os
import threading

import boto3
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table

from devtools.moto_server import one_at_a_time


def first_update_with_a_query_meanwhile(monkeypatch) -> list[dict]:
    """An UpdateItem creating an item, held just after moto put its key, while another thread queries the table:
    what the query returned."""
    key_put, answered, found = threading.Event(), threading.Event(), []
    real_put = Table.put_item

    def put_then_hold(self, item_attrs, *args, **kwargs):
        stored = real_put(self, item_attrs, *args, **kwargs)
        if set(item_attrs) == {"pk", "sk"}:  # the update's key-only item
            key_put.set()
            answered.wait(2)  # the query answers meanwhile, unless it waits for the update (then the hold ends)
        return stored

    monkeypatch.setattr(Table, "put_item", put_then_hold)
    for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL")]:  # the local stack's, if applied
        monkeypatch.delenv(name)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        dynamodb.create_table(
            TableName="t",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
        )

        def query() -> None:
            key_put.wait(5)
            found.extend(
                dynamodb.query(
                    TableName="t", KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": "c"}}
                )["Items"]
            )
            answered.set()

        reader = threading.Thread(target=query)
        reader.start()
        dynamodb.update_item(
            TableName="t",
            Key={"pk": {"S": "c"}, "sk": {"S": "OFFSET#t#0"}},
            UpdateExpression="SET topic = :t",
            ExpressionAttributeValues={":t": {"S": "t"}},
        )
        reader.join(10)
    return found


def test_moto_alone_shows_a_query_an_item_without_its_attributes(monkeypatch):
    assert [set(item) for item in first_update_with_a_query_meanwhile(monkeypatch)] == [{"pk", "sk"}]


def test_with_the_item_operations_one_at_a_time_a_query_sees_the_whole_item(monkeypatch):
    for name, operation in one_at_a_time(DynamoDBBackend).items():
        monkeypatch.setattr(DynamoDBBackend, name, operation)
    assert [set(item) for item in first_update_with_a_query_meanwhile(monkeypatch)] == [{"pk", "sk", "topic"}]
