"""The trigger's check of its own event source mappings: each topic read by an Enabled mapping whose last
processing result is healthy, anything else reported."""

from __future__ import annotations

import io
import json
import zipfile

import boto3
import pytest
from aws_lambda_powertools import Logger

from lambdas.trigger.esm_health import METRIC, MappingProblem, check, problems, report

CLUSTER = "arn:aws:kafka:eu-west-1:123456789012:cluster/events/0c3e5b2a-1d4f-4a8e-9b6c-7f0e2d1a3b4c-2"


def _msk(topic: str, state: str = "Enabled", result: str | None = "OK", reason: str = "USER_INITIATED") -> dict:
    """A ListEventSourceMappings item of an MSK mapping, as Lambda returns it."""
    item = {
        "UUID": f"uuid-{topic}",
        "EventSourceArn": CLUSTER,
        "Topics": [topic],
        "State": state,
        "StateTransitionReason": reason,
    }
    return item if result is None else {**item, "LastProcessingResult": result}


CONNECTION = "PROBLEM: Connection error. Your VPC must be able to connect to Lambda and STS"
AUTHORIZATION = "PROBLEM: Cluster failed to authorize Lambda."


@pytest.mark.parametrize(
    "mappings, topics, expected",
    [
        ([_msk("orders"), _msk("payments", result="No records processed")], ["orders", "payments"], []),
        ([_msk("orders", result=None)], ["orders"], []),  # a new mapping has processed nothing yet
        (
            [_msk("orders", result=CONNECTION)],
            ["orders"],
            [MappingProblem("orders", "uuid-orders", "Enabled", CONNECTION)],
        ),
        (
            [_msk("orders", result=AUTHORIZATION)],
            ["orders"],
            [MappingProblem("orders", "uuid-orders", "Enabled", AUTHORIZATION)],
        ),
        (
            [_msk("orders", state="Disabled")],
            ["orders"],
            [MappingProblem("orders", "uuid-orders", "Disabled", "USER_INITIATED")],
        ),
        (
            [_msk("orders", state="Creating", result=None, reason="")],
            ["orders"],
            [MappingProblem("orders", "uuid-orders", "Creating", "")],
        ),
        (
            [_msk("orders")],
            ["orders", "payments"],
            [MappingProblem("payments", None, None, "no event source mapping reads this topic")],
        ),
    ],
)
def test_problems_of_mappings_against_the_topics_they_must_read(mappings, topics, expected):
    assert problems(mappings, topics) == expected


def _function(name: str) -> str:
    """A function in moto, as the trigger is in Lambda."""
    iam = boto3.client("iam")
    try:
        role = iam.get_role(RoleName="trigger")["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        role = iam.create_role(
            RoleName="trigger",
            AssumeRolePolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "sts:AssumeRole",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                        }
                    ],
                }
            ),
        )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("handler.py", "def handler(event, context):\n    return None\n")
    boto3.client("lambda").create_function(
        FunctionName=name, Runtime="python3.12", Role=role, Handler="handler.handler", Code={"ZipFile": code.getvalue()}
    )
    return name


def _queue(name: str) -> str:
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def test_check_lists_the_function_mappings_through_the_api(aws):
    """moto serves ListEventSourceMappings (not MSK mappings): a disabled mapping of this function is reported,
    another function's is not, and a topic with no mapping is."""
    lambda_ = boto3.client("lambda")
    trigger, other = _function("sink-trigger"), _function("other")
    enabled = lambda_.create_event_source_mapping(EventSourceArn=_queue("a"), FunctionName=trigger)["UUID"]
    disabled = lambda_.create_event_source_mapping(EventSourceArn=_queue("b"), FunctionName=trigger, Enabled=False)[
        "UUID"
    ]
    lambda_.create_event_source_mapping(EventSourceArn=_queue("c"), FunctionName=other, Enabled=False)
    found = check(lambda_, trigger, ["orders"])
    assert [(p.uuid, p.state) for p in found if p.uuid] == [(disabled, "Disabled")]
    assert enabled not in {p.uuid for p in found}
    assert [p.topic for p in found if p.uuid is None] == ["orders"]


def test_report_logs_each_problem_and_publishes_their_number(aws, monkeypatch, capsys):
    """The metric the EventSourceMappings alarm watches: METRIC in SinkEngine with the `service` dimension."""
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sink-trigger")
    lambda_ = boto3.client("lambda")
    trigger = _function("sink-trigger")
    lambda_.create_event_source_mapping(EventSourceArn=_queue("a"), FunctionName=trigger, Enabled=False)
    found = report(lambda_, trigger, ["orders"], Logger(service="sink-trigger"))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    warnings = [line for line in lines if line.get("message") == "EVENT_SOURCE_MAPPING_UNHEALTHY"]
    assert {(w.get("topic"), w.get("state")) for w in warnings} == {(None, "Disabled"), ("orders", None)}
    (emf,) = [line for line in lines if "_aws" in line]
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "SinkEngine" and directive["Dimensions"] == [["service"]]
    assert (emf["service"], emf[METRIC]) == ("sink-trigger", [float(len(found))]) and len(found) == 2
