"""AwsAssumeRoleCredentialsProvider under enforced IAM: a connector whose S3 client assumes a role, synthesized for
the dev environment, runs as its own job role. The job role may assume exactly the role its file names and writes
no object itself; the objects are written as the assumed role, whose own policy grants the connector's prefixes
and whose trust policy names the job role and the external id. A role the file does not name is refused by the job
role's policy, a wrong external id by the trust policy.

moto checks a trust policy's principal literally (docs/aws-fidelity.md): the caller of AssumeRole is the job
role's session, which AWS matches to a principal naming the role and moto only to one naming the session, so the
trust policy names both (a role session principal is valid on AWS too)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from devtools.producer import produce
from tests.iam.acting import acting_as
from tests.iam.deployment import (
    ASSUME_ROLE_CONNECTOR,
    TEST_SETTINGS,
    WRITER_EXTERNAL_ID,
    Deployed,
    assume_role_connector_document,
    synthesize,
)
from tests.iam.engine import PARTITIONS, run_cli
from tests.iam.physical import MOTO_ACCOUNT
from tests.iam.template import connector_role, custom_resource_property
from tests.iam.world import SESSION, Principal

WRITER, OTHER_WRITER = "orders-lake-writer", "payments-lake-writer"


@dataclass(frozen=True)
class AssumeRoleDeployment:
    deployed: Deployed
    job: Principal
    config_uri: str
    published: dict  # the connector config as the admin publishes it


def _writer_policy(bucket: str, prefixes: list[str]) -> dict:
    """What the role the S3 client assumes may do: the engine's object writes under the connector's prefixes."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectTagging", "s3:GetObject"],
                "Resource": [f"arn:aws:s3:::{bucket}/{p}*" for p in prefixes],
            },
            {"Effect": "Allow", "Action": "s3:ListBucketMultipartUploads", "Resource": f"arn:aws:s3:::{bucket}"},
        ],
    }


def _trust(job: Principal) -> dict:
    """Trust of the job role with the external id: the role (AWS), and its session (what moto matches)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "sts:AssumeRole",
                "Principal": {"AWS": [job.arn, f"arn:aws:sts::{MOTO_ACCOUNT}:assumed-role/{job.name}/{SESSION}"]},
                "Condition": {"StringEquals": {"sts:ExternalId": WRITER_EXTERNAL_ID}},
            }
        ],
    }


@pytest.fixture(scope="module")
def assume(iam_stack, world, engine_run, tmp_path_factory) -> AssumeRoleDeployment:
    """The connector deployed next to the suite's one (whose run left records on the topics), its config
    published, its job role; WRITER and OTHER_WRITER created by the admin, both trusting that job role and both
    granted the connector's prefixes. Its config is removed afterwards."""
    from infra.constructs.admin import RESOURCE_TYPE
    from infra.settings import load_settings
    from lambdas.admin.desired import DesiredState

    settings = load_settings("dev")
    document = assume_role_connector_document(
        iam_stack.bootstrap_servers, f"arn:aws:iam::{settings.account}:role/{WRITER}"
    )
    synthesized = synthesize(document, tmp_path_factory.mktemp("iam-assume-role"))
    mine = Deployed.of(synthesized, {})
    template = synthesized.templates["service"]
    desired = DesiredState.from_json(
        mine.in_moto(custom_resource_property(template, RESOURCE_TYPE, "State", mine.physical["service"]))
    )
    (connector,) = desired.connectors
    published = desired.published_objects()[connector.config_key]
    s3 = world.admin.client("s3")
    s3.put_object(Bucket=desired.bucket, Key=connector.config_key, Body=published)
    job_id = connector_role(template, ASSUME_ROLE_CONNECTOR)
    job = world.role(mine.role_name(job_id), mine.documents(job_id))
    iam = world.admin.client("iam")
    prefixes = [f"{ASSUME_ROLE_CONNECTOR}/", synthesized.dead_letter_prefix]
    for name in (WRITER, OTHER_WRITER):
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(_trust(job)))
        iam.put_role_policy(
            RoleName=name, PolicyName="writes", PolicyDocument=json.dumps(_writer_policy(desired.bucket, prefixes))
        )
    yield AssumeRoleDeployment(mine, job, f"s3://{desired.bucket}/{connector.config_key}", json.loads(published))
    s3.delete_object(Bucket=desired.bucket, Key=connector.config_key)


def _role_arn(name: str) -> str:
    return f"arn:aws:iam::{MOTO_ACCOUNT}:role/{name}"


def test_the_job_role_assumes_the_named_role_and_the_objects_are_written_as_it(assume, world, spark):
    # given the job role as synthesized: AssumeRole on exactly the named role, no object write of its own
    statements = [s for d in assume.job.documents for s in d.statements]
    assert [s["Resource"] for s in statements if "sts:AssumeRole" in json.dumps(s["Action"])] == [_role_arn(WRITER)]
    assert not any("s3:PutObject" in json.dumps(s["Action"]) for s in statements)
    # when the connector runs as its job role
    with acting_as(assume.job, spark=spark):
        run = run_cli("run", "--config", assume.config_uri)
    # then it succeeds: every partition's file and the dead letters were written, as the assumed role
    assert run.code == 0, run.err
    bucket = assume.config_uri.removeprefix("s3://").split("/")[0]
    s3 = world.admin.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"{ASSUME_ROLE_CONNECTOR}/")["Contents"]]
    assert sorted({k.split("/")[1] + "-" + k.split("+")[1] for k in keys}) == ["orders-0", "orders-1", "payments-0"]
    assert s3.list_objects_v2(Bucket=bucket, Prefix=assume.deployed.synthesized.dead_letter_prefix)["KeyCount"] > 0


@pytest.mark.parametrize(
    "changes, refused_by",
    [
        ({"s3.credentials.provider.sts.role.arn": _role_arn(OTHER_WRITER)}, "the job role's policy"),
        ({"s3.credentials.provider.sts.role.external.id": "ext-someone-else"}, "the writer role's trust policy"),
    ],
    ids=["role-not-named", "wrong-external-id"],
)
def test_an_assume_role_the_deployment_does_not_allow_is_refused_naming_the_key(
    assume, iam_stack, spark, tmp_path, changes, refused_by
):
    # given the published config edited (not deployed: the grants are synthesized from the deployed file)
    document = json.loads(json.dumps(assume.published))
    document["config"].update(changes)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    # and a full file's worth of new records, so that a task uploads
    produce(
        iam_stack.bootstrap_servers,
        "payments",
        [b'{"n": 0}'] * int(TEST_SETTINGS["flush.size"]),
        PARTITIONS["payments"],
    )
    # when the connector runs with it as its job role
    with acting_as(assume.job, spark=spark):
        result = run_cli("run", "--config", str(edited))
    # then AssumeRole is refused (by `refused_by`), and the run fails naming the key and the role
    assert result.code != 0, result.out
    role = document["config"]["s3.credentials.provider.sts.role.arn"]
    assert "config key 's3.credentials.provider.sts.role.arn'" in result.err, result.err
    assert f"AssumeRole of {role} failed" in result.err and "AccessDenied" in result.err, result.err
