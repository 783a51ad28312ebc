"""`sink-engine doctor` under enforced IAM, as a connector's job role with the statements infra/job_policy.py gives
it (moto copies: S3 by resource ARN, the other services by action): every check passes, so the probes stay inside
the grants (the S3 probes under the connector's own prefixes); with one grant taken away, the checks that need it
fail naming the IAM action and the statement (Sid) that grants it.

No CDK synthesis: the role is made from `job_statements` of a spec built here, in the session's IAM world."""

from __future__ import annotations

import json
import uuid

import pytest

from devtools.producer import create_topic
from sink_engine.cli import main
from tests.iam.acting import acting_as
from tests.iam.physical import MOTO_ACCOUNT
from tests.iam.policies import PolicyDocument

DLQ_PREFIX = "dlq/"


@pytest.fixture(scope="module")
def doctor_connector(iam_stack, world, tmp_path_factory) -> dict:
    """A connector of its own (topic, bucket, offsets table made by the admin), its file, and its job statements."""
    from infra.connectors import ConnectorSpec
    from infra.job_policy import JobPhysicalNames, job_statements
    from sink_engine.offsets import ensure_table

    unique = uuid.uuid4().hex[:8]
    name, topic, bucket, table = f"doctor-{unique}", f"doctor-{unique}", f"doctor-lake-{unique}", f"doctor-{unique}"
    create_topic(iam_stack.bootstrap_servers, topic, 1)
    world.admin.client("s3").create_bucket(
        Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": world.region}
    )
    ensure_table(world.admin.client("dynamodb"), table)
    document = {
        "name": name,
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": topic,
            "bootstrap.servers": iam_stack.bootstrap_servers,
            "s3.bucket.name": bucket,
            "s3.region": world.region,
            "offset.storage.dynamodb.table": table,
            "flush.size": "100",
            "format.class": "JsonFormat",
            "s3.object.tagging": "true",
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": f"{DLQ_PREFIX}{name}",
            "sink.kafka.timeout.ms": "10000",
        },
    }
    path = tmp_path_factory.mktemp("doctor-iam") / "connector.json"
    path.write_text(json.dumps(document))
    spec = ConnectorSpec(name, str(path), (topic,), "topics", "json", document, dlq_s3_prefix=f"{DLQ_PREFIX}{name}")
    names = JobPhysicalNames(
        bucket,
        f"arn:aws:dynamodb:{world.region}:{MOTO_ACCOUNT}:table/{table}",
        f"arn:aws:kafka:{world.region}:{MOTO_ACCOUNT}:cluster/dev/0000-1111",
        DLQ_PREFIX,
        world.region,
        MOTO_ACCOUNT,
    )
    return {"name": name, "path": str(path), "statements": job_statements(spec, names)}


def _doctor_as(world, connector: dict, statements: list[dict], role: str, capsys) -> tuple[int, dict[str, str]]:
    """Run the doctor as a role with exactly `statements`: (exit code, failed check -> message)."""
    principal = world.role(role, [PolicyDocument("inline job", {"Version": "2012-10-17", "Statement": statements})])
    with acting_as(principal):
        code = main(["doctor", "--config", connector["path"]])
    out = capsys.readouterr().out
    failed = {}
    for line in out.splitlines()[:-1]:
        check, rest = line.split("  ", 1)
        status, message = rest.strip().split("  ", 1)
        if status == "FAILED":
            failed[check.strip()] = message.strip()
    return code, failed


def _without(statements: list[dict], action: str) -> list[dict]:
    return [
        {**s, "Action": [a for a in s["Action"] if a != action]}
        for s in statements
        if [a for a in s["Action"] if a != action]
    ]


def test_the_doctor_passes_as_the_job_role_with_its_grants(world, doctor_connector, capsys):
    code, failed = _doctor_as(
        world, doctor_connector, doctor_connector["statements"], f"{doctor_connector['name']}-job", capsys
    )
    assert (code, failed) == (0, {})


@pytest.mark.parametrize(
    "action, checks, sid",
    [
        ("s3:PutObject", {"s3 write", "s3 dead letters"}, "WriteOwnPrefixes"),
        ("s3:ListBucketMultipartUploads", {"s3 incomplete uploads"}, "ListUploads"),
        ("s3:GetObject", {"s3 dead letters"}, "ReadOwnDeadLetters"),
        ("dynamodb:DescribeTable", {"dynamodb table"}, "DescribeOffsetsTable"),
        ("dynamodb:UpdateItem", {"dynamodb conditional write"}, "OwnOffsetsLeaseAndPlans"),
    ],
)
def test_a_grant_taken_away_is_named_with_its_action_and_statement(
    world, doctor_connector, capsys, action, checks, sid
):
    # given the job role without one action
    statements = _without(doctor_connector["statements"], action)
    # when the doctor runs as it
    code, failed = _doctor_as(
        world, doctor_connector, statements, f"{doctor_connector['name']}-no-{action.split(':')[1]}", capsys
    )
    # then exactly the checks that need the action fail, naming it and the statement that grants it
    assert code == 1 and set(failed) == checks, failed
    for message in failed.values():
        assert f"needs {action} on " in message and f"statement {sid} (infra/job_policy.py)" in message
