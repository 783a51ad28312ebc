"""TransactWriteItems that DynamoDB cancels for transient reasons (a concurrent write such as the run's own lease
renewal, throttling inside the transaction) are sent again; a failed condition is not."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber

from sink_engine.offsets.transactions import ATTEMPTS, transact_write, transient

ITEMS = [
    {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_exists(pk)"}},
    {"Put": {"TableName": "t", "Item": {"pk": {"S": "b"}}}},
]
EXPECTED = {"TransactItems": ITEMS, "ClientRequestToken": ANY}


def _cancelled(stubber: Stubber, *codes: str) -> None:
    stubber.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        "Transaction cancelled",
        400,
        expected_params=EXPECTED,
        modeled_fields={"CancellationReasons": [{"Code": code} for code in codes]},
    )


@pytest.fixture
def stubbed_dynamodb():
    client = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    "codes",
    [
        ("TransactionConflict", "None"),
        ("None", "ThrottlingError"),
        ("ProvisionedThroughputExceeded", "TransactionConflict"),
    ],
)
def test_a_transient_cancellation_is_sent_again_until_it_goes_through(stubbed_dynamodb, codes):
    client, stubber = stubbed_dynamodb
    # given DynamoDB cancels the transaction twice for transient reasons, then applies it
    _cancelled(stubber, *codes)
    _cancelled(stubber, *codes)
    stubber.add_response("transact_write_items", {}, EXPECTED)
    waits = []
    # when it is written
    transact_write(client, ITEMS, sleep=waits.append)
    # then it was sent three times, waiting (with jitter, growing bounds) before each retry
    assert len(waits) == 2 and all(0 <= wait <= 2.0 for wait in waits)


@pytest.mark.parametrize(
    "codes",
    [
        ("ConditionalCheckFailed", "None"),
        ("ConditionalCheckFailed", "TransactionConflict"),
        ("None", "ValidationError"),
    ],
)
def test_a_cancellation_with_a_failed_condition_is_not_retried(stubbed_dynamodb, codes):
    client, stubber = stubbed_dynamodb
    # given a cancellation that is not only transient (another run's commit changed the item)
    _cancelled(stubber, *codes)
    # then it is raised at once, for the caller to judge
    with pytest.raises(ClientError) as raised:
        transact_write(client, ITEMS, sleep=pytest.fail)
    assert not transient(raised.value)


def test_transient_cancellations_that_never_end_are_raised_after_the_last_attempt(stubbed_dynamodb):
    client, stubber = stubbed_dynamodb
    for _ in range(ATTEMPTS):
        _cancelled(stubber, "TransactionConflict", "None")
    waits = []
    with pytest.raises(ClientError) as raised:
        transact_write(client, ITEMS, sleep=waits.append)
    assert transient(raised.value) and len(waits) == ATTEMPTS - 1
