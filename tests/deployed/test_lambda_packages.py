"""Each Lambda handler runs from its package (code folder and layers laid out as Lambda does, boto3 as the
runtime brings it, nothing of the development venv) with AWS-shaped events, against the local stack, with the
environment the synthesized dev template gives it where the test has no reason to differ."""

from __future__ import annotations

import copy
import json
import time
import uuid
from pathlib import Path

import boto3
import pytest

from devtools.producer import create_topic
from infra.connectors import INDEX_KEY, connector_index, index_uri, load_connectors
from infra.settings import load_settings
from sink_engine.dlq.letter import DeadLetter
from tests.cloudformation import custom_resource_event, response_endpoint
from tests.conftest import BUCKET, TABLE
from tests.connector_index import publish_index
from tests.deployed.lambda_runner import invoke
from tests.dlq_corpus import read_topic

EVENTS = Path(__file__).resolve().parents[1] / "events"
ROLE_ARN = "arn:aws:iam::123456789012:role/sink-job"
DEV = load_settings("dev")


@pytest.fixture
def cloudformation():
    with response_endpoint() as endpoint:
        yield endpoint


def letter(connector: str, topic: str, offset: int, error_class: str) -> DeadLetter:
    return DeadLetter(
        connector,
        topic,
        0,
        offset,
        1_700_000_000_000,
        f"k{offset}".encode(),
        f"v{offset}".encode(),
        (("trace", f"t{offset}".encode()),),
        error_class,
        "VALUE_CONVERTER",
        "bad",
    )


def test_replay_replays_dead_letters_from_its_code_and_layers(stack, artifacts, dev_templates, unique):
    # given a connector whose config and S3 dead letters are in S3, reading a topic on the broker
    name, topic, prefix = f"replay-{unique}", f"replayed-{unique}", f"dlq-{unique}"
    create_topic(stack.bootstrap_servers, topic, 1)
    s3 = boto3.client("s3")
    config_key = f"_connectors/{name}.json"
    s3.put_object(
        Bucket=BUCKET,
        Key=config_key,
        Body=json.dumps(
            {
                "name": name,
                "config": {
                    "topics": topic,
                    "bootstrap.servers": stack.bootstrap_servers,
                    "s3.bucket.name": BUCKET,
                    "flush.size": 10,
                    "format.class": "JsonFormat",
                    "value.converter.schemas.enable": "false",
                    "offset.storage.dynamodb.table": TABLE,
                    "errors.tolerance": "all",
                    "errors.deadletterqueue.s3.prefix": prefix,
                },
            }
        ).encode(),
    )
    letters = [
        letter(name, topic, 3, "ConversionError"),
        letter(name, topic, 5, "PartitioningError"),
        letter(name, topic, 8, "ConversionError"),
    ]
    s3.put_object(
        Bucket=BUCKET,
        Key=f"{prefix}/{topic}/partition=0/{topic}+0+0000000003.json",
        Body=b"".join(x.to_json_line() for x in letters),
    )
    index = publish_index(
        f"s3://{BUCKET}/_connectors/_index-{unique}.json",
        [{"name": name, "topics": [topic], "config_uri": f"s3://{BUCKET}/{config_key}"}],
    )
    environment = {**dev_templates.function_environment("dlq_replay", {}), "CONNECTORS_URI": index}
    layout = artifacts.lambda_layout("dlq_replay")
    # when an operator looks first, then replays, then repeats the replay
    dry = invoke(layout, {"connector": name, "dry_run": True}, environment, stack.env)
    first = invoke(layout, {"connector": name}, environment, stack.env)
    again = invoke(layout, {"connector": name}, environment, stack.env)
    # then each dead letter went back to its topic once, as it was
    assert dry["found"] == {"ConversionError": 2, "PartitioningError": 1} and dry["totals"]["replayed"] == 3
    assert first["totals"]["replayed"] == 3 and again["totals"]["already_replayed"] == 3
    records = read_topic(stack.bootstrap_servers, topic)
    assert [(r["key"], r["value"], r["headers"]) for r in records] == [
        (f"k{o}".encode(), f"v{o}".encode(), [("trace", f"t{o}".encode())]) for o in (3, 5, 8)
    ]


def test_replay_package_stays_small(artifacts):
    layout = artifacts.lambda_layout("dlq_replay")
    assert layout.unzipped_bytes() < 100e6  # Lambda's limit: 250 MB with every layer, unzipped


def test_admin_answers_a_create_event_from_its_package(stack, artifacts, dev_templates, cloudformation):
    # given the dev stack's custom resource and the bucket it publishes into
    values = {
        ("AWS::S3::Bucket", "Ref"): DEV.bucket_name,
        ("AWS::IAM::Role", "Arn"): ROLE_ARN,
        ("AWS::Lambda::Function", "Arn"): "arn:aws:lambda:us-east-1:123456789012:function:sink-admin",
    }
    ((stack_name, logical, resource),) = dev_templates.resources("Custom::SinkConnectors")
    properties = dev_templates.resolve(stack_name, resource["Properties"], values)
    boto3.client("s3").create_bucket(Bucket=DEV.bucket_name)
    response_url, received = cloudformation
    event = custom_resource_event(
        "Create",
        response_url,
        properties,
        resource["Type"],
        str(uuid.uuid4()),
        logical_id=logical,
        stack_id=f"arn:aws:cloudformation:us-east-1:123456789012:stack/{stack_name}/{uuid.uuid4()}",
    )
    event["ServiceToken"] = properties["ServiceToken"]
    # when CloudFormation creates it
    answer = invoke(
        artifacts.lambda_layout("admin"), event, dev_templates.function_environment("admin", values), stack.env
    )
    # then CloudFormation heard SUCCESS for this request and the connector configs and index are published
    assert answer["status"] == "SUCCESS", answer
    (response,) = received
    assert (response["Status"], response["RequestId"]) == ("SUCCESS", event["RequestId"])
    listed = boto3.client("s3").list_objects_v2(Bucket=DEV.bucket_name, Prefix="_connectors/").get("Contents", [])
    assert {c.config_key for c in load_connectors(DEV)} | {INDEX_KEY} <= {o["Key"] for o in listed}


def test_app_stop_stops_the_application_on_an_update_event_from_its_package(
    stack, artifacts, dev_templates, cloudformation
):
    # given the dev stack's application STARTED (moto's state from creation) with a run behind it
    values = {
        ("AWS::Logs::LogGroup", "Ref"): "sink-dev-job-logs",
        ("AWS::Lambda::Function", "Arn"): "arn:aws:lambda:us-east-1:123456789012:function:sink-app-stop",
    }
    ((stack_name, logical, resource),) = dev_templates.resources("Custom::SinkApplicationStop")
    properties = dev_templates.resolve(stack_name, resource["Properties"], values)
    emr = boto3.client("emr-serverless")
    application = emr.create_application(
        name=properties["ApplicationName"], releaseLabel=DEV.emr.release_label, type="SPARK"
    )["applicationId"]
    emr.start_job_run(
        applicationId=application,
        clientToken=str(uuid.uuid4()),
        executionRoleArn=ROLE_ARN,
        jobDriver={"sparkSubmit": {"entryPoint": "s3://artifacts/entrypoint.py"}},
    )
    response_url, received = cloudformation
    event = custom_resource_event(
        "Update",
        response_url,
        properties,
        resource["Type"],
        str(uuid.uuid4()),
        logical_id=logical,
        physical_id=f"sink-application-stop-{properties['ApplicationName']}",
        stack_id=f"arn:aws:cloudformation:us-east-1:123456789012:stack/{stack_name}/{uuid.uuid4()}",
    )
    # when CloudFormation updates it (the application's properties changed)
    answer = invoke(
        artifacts.lambda_layout("app_stop"), event, dev_templates.function_environment("app_stop", values), stack.env
    )
    # then the application is stopped before CloudFormation updates it, and CloudFormation heard SUCCESS
    assert answer["status"] == "SUCCESS", answer
    assert [r["Status"] for r in received] == ["SUCCESS"]
    assert emr.get_application(applicationId=application)["application"]["state"] == "STOPPED"
    emr.delete_application(applicationId=application)


def test_trigger_decides_on_an_msk_event_from_its_package(stack, artifacts, dev_templates, unique):
    # given the dev trigger's environment, with moto's table and an EMR application moto knows, and the dev
    # connectors' index where that environment points
    application = boto3.client("emr-serverless").create_application(
        name=f"sink-{unique}", releaseLabel="emr-7.12.0", type="SPARK"
    )["applicationId"]
    environment = dev_templates.function_environment(
        "trigger",
        {
            ("AWS::DynamoDB::Table", "Ref"): TABLE,
            ("AWS::DynamoDB::GlobalTable", "Ref"): TABLE,
            ("AWS::EMRServerless::Application", "ApplicationId"): application,
            ("AWS::IAM::Role", "Arn"): ROLE_ARN,
        },
    )
    connectors = load_connectors(DEV)
    assert environment["CONNECTORS_URI"] == index_uri(DEV.bucket_name)
    publish_index(
        environment["CONNECTORS_URI"],
        connector_index(connectors, DEV.bucket_name, {c.name: ROLE_ARN for c in connectors}),
    )
    # when an MSK batch (AWS's sample shape) brings records of every connector's topics
    sample = json.loads((EVENTS / "msk_event.json").read_text())
    template = next(iter(sample["records"].values()))[0]
    now = int(time.time() * 1000)
    topics = sorted({t for c in connectors for t in c.topics})
    event = {
        **sample,
        "records": {
            f"{t}-0": [
                {**copy.deepcopy(template), "topic": t, "partition": 0, "offset": o, "timestamp": now} for o in range(5)
            ]
            for t in topics
        },
    }
    result = invoke(artifacts.lambda_layout("trigger"), event, environment, stack.env)
    # then it answered with a decision for each connector reading them
    assert {d["connector"] for d in result["decisions"]} == {c.name for c in connectors}
