"""Each connector's job role grants what the engine calls for its config, scoped to that connector, and stays
within IAM's size limit for a role's inline policies however many connectors a deployment has."""

from __future__ import annotations

import dataclasses
import json

import pytest

from infra.connectors import load_connectors
from infra.job_policy import JobPhysicalNames, job_statements
from infra.settings import load_settings

SETTINGS = load_settings("prod")
AUDIT, ORDERS = load_connectors(SETTINGS)
NAMES = JobPhysicalNames(
    SETTINGS.bucket_name,
    "arn:aws:dynamodb:us-east-1:222222222222:table/sink-engine-offsets",
    SETTINGS.msk.cluster_arn,
    "dlq/",
    "us-east-1",
    "222222222222",
)
IAM_ROLE_INLINE_LIMIT = 10_240  # characters of all inline policies of a role, whitespace not counted


def _with(spec, **config):
    document = json.loads(json.dumps(spec.document))
    document["config"].update(config)
    return dataclasses.replace(spec, document=document)


def _by_sid(spec) -> dict[str, dict]:
    return {s["Sid"]: s for s in job_statements(spec, NAMES)}


def _actions(spec) -> set[str]:
    return {a for s in job_statements(spec, NAMES) for a in s["Action"]}


def test_a_connector_may_write_only_its_own_prefixes_items_and_topics():
    statements = _by_sid(ORDERS)
    bucket = f"arn:aws:s3:::{SETTINGS.bucket_name}"
    assert statements["WriteOwnPrefixes"]["Resource"] == [f"{bucket}/topics/{t}/*" for t in ORDERS.topics] + [
        f"{bucket}/dlq/orders-s3-sink/*"
    ]
    assert statements["ReadOwnConfig"]["Resource"] == [f"{bucket}/_connectors/orders-s3-sink.json"]
    leading = statements["OwnOffsetsLeaseAndPlans"]["Condition"]["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"]
    assert leading == ["orders-s3-sink"]
    assert statements["ReadOwnTopics"]["Resource"] == [SETTINGS.msk.resource_arn("topic", t) for t in ORDERS.topics]
    assert statements["UseOwnConsumerGroup"]["Resource"] == [
        SETTINGS.msk.resource_arn("group", "connect-orders-s3-sink")
    ]
    assert not any("audit" in json.dumps(s) for s in statements.values())


def test_the_run_lists_the_buckets_uploads_unconditioned_and_aborts_only_under_its_own_prefixes():
    """ListBucketMultipartUploads carries no s3:prefix key (SAR): the listing is granted on the bucket as a whole."""
    statements = _by_sid(ORDERS)
    bucket = f"arn:aws:s3:::{SETTINGS.bucket_name}"
    assert statements["ListUploads"] == {
        "Sid": "ListUploads",
        "Effect": "Allow",
        "Action": ["s3:ListBucketMultipartUploads"],
        "Resource": [bucket],
    }
    assert [s["Sid"] for s in statements.values() if "s3:AbortMultipartUpload" in s["Action"]] == ["WriteOwnPrefixes"]


def test_the_run_may_describe_the_table_and_delete_plans_in_batches():
    """`driver/job.py` checks the table with DescribeTable; `run/plans.py` deletes plans with BatchWriteItem."""
    statements = _by_sid(ORDERS)
    assert statements["DescribeOffsetsTable"]["Action"] == ["dynamodb:DescribeTable"]
    assert "dynamodb:BatchWriteItem" in statements["OwnOffsetsLeaseAndPlans"]["Action"]


@pytest.mark.parametrize(
    "config, action, granted",
    [
        ({}, "s3:PutObjectTagging", False),
        ({"s3.object.tagging": "true"}, "s3:PutObjectTagging", True),
        ({}, "s3:PutObjectAcl", False),
        ({"s3.acl.canned": "bucket-owner-full-control"}, "s3:PutObjectAcl", True),
        ({}, "glue:GetSchemaVersion", False),
        (
            {
                "value.converter": "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter",
                "value.converter.region": "us-east-1",
            },
            "glue:GetSchemaVersion",
            True,
        ),
        ({}, "kms:GenerateDataKey", False),
        (
            {"s3.ssea.name": "aws:kms", "s3.sse.kms.key.id": "1234abcd-12ab-34cd-56ef-1234567890ab"},
            "kms:GenerateDataKey",
            True,
        ),
    ],
)
def test_features_of_the_config_bring_their_permissions(config, action, granted):
    assert (action in _actions(_with(ORDERS, **config))) is granted


def test_s3_dead_letters_bring_reading_them_back():
    """A rerun reads the dead-letter object an earlier attempt of its range wrote (dlq/s3_destination.py)."""
    bucket = f"arn:aws:s3:::{SETTINGS.bucket_name}"
    with_s3 = dataclasses.replace(ORDERS, dlq_s3_prefix="dlq/orders-s3-sink", dlq_topic=None)
    assert _by_sid(with_s3)["ReadOwnDeadLetters"]["Resource"] == [f"{bucket}/dlq/orders-s3-sink/*"]
    assert "ReadOwnDeadLetters" not in _by_sid(dataclasses.replace(ORDERS, dlq_s3_prefix=None))


@pytest.mark.parametrize(
    "key_id, resource, condition",
    [
        ("arn:aws:kms:us-east-1:222222222222:key/k-1", "arn:aws:kms:us-east-1:222222222222:key/k-1", None),
        ("k-1", "arn:aws:kms:us-east-1:222222222222:key/k-1", None),
        (
            "alias/orders",
            "arn:aws:kms:us-east-1:222222222222:key/*",
            {"ForAnyValue:StringEquals": {"kms:ResourceAliases": ["alias/orders"]}},
        ),
    ],
)
def test_an_sse_kms_key_is_granted_by_arn_id_or_alias(key_id, resource, condition):
    statement = _by_sid(_with(ORDERS, **{"s3.ssea.name": "aws:kms", "s3.sse.kms.key.id": key_id}))["UseOwnKmsKey"]
    assert statement["Resource"] == [resource] and statement.get("Condition") == condition


def test_a_dead_letter_topic_is_written_in_the_connectors_own_transactions():
    statements = _by_sid(dataclasses.replace(ORDERS, dlq_topic="orders-dlq"))
    msk = SETTINGS.msk
    assert statements["WriteDeadLetterTopic"]["Resource"] == [msk.resource_arn("topic", "orders-dlq")]
    assert statements["WriteIdempotently"]["Resource"] == [msk.cluster_arn]
    assert statements["DeadLetterTransactions"]["Resource"] == [
        msk.resource_arn("transactional-id", "sink-engine-dlq.orders-s3-sink.*")
    ]
    assert {"WriteDeadLetterTopic", "WriteIdempotently", "DeadLetterTransactions"}.isdisjoint(_by_sid(ORDERS))


def test_fifty_connectors_of_ten_topics_each_fit_iam_limits(tmp_path):
    """The job of 50 connectors x 10 topics (each with a restore target), synthesized: 50 roles, and each role's
    inline policies stay under 10,240 characters (intrinsic functions counted as 100-character ARNs, more than any
    real one).
    (The whole service stack of such a deployment would pass CloudFormation's 500 resources per stack with one
    MSK event source mapping per topic: that is the trigger's limit, not the job role's.)"""
    from aws_cdk import Environment, Stack
    from aws_cdk import aws_kms as kms

    from infra.application import new_app
    from infra.constructs.emr_job import SinkJob
    from infra.stacks.connectors import ConnectorStacks
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    specs = tuple(
        _with(
            dataclasses.replace(
                ORDERS,
                name=f"connector-{i:02d}",
                topics=tuple(f"topic-{i:02d}-{t}.events" for t in range(10)),
                restore_targets=tuple(f"topic-{i:02d}-{t}.events.restored*" for t in range(10)),
            ),
            # fifty scheduled rotations on one boundary would start fifty runs on one tick, past StartJobRun's
            # burst of 25 (infra/quotas.py): these close on flush.size
            **{"name": f"connector-{i:02d}", "rotate.schedule.interval.ms": "-1"},
        )
        for i in range(50)
    )
    app = new_app(str(tmp_path))
    stack = Stack(app, "JobOnly", env=Environment(account=SETTINGS.account, region=SETTINGS.region))
    # prod's capacity holds a few runs, not fifty: they queue (emr.concurrent_runs, see infra/capacity.py)
    queueing = dataclasses.replace(SETTINGS, emr=dataclasses.replace(SETTINGS.emr, concurrent_runs=1))
    SinkJob(
        stack,
        "Job",
        settings=queueing,
        data_key=kms.Key(stack, "Key"),
        connectors=specs,
        table_arn=NAMES.table_arn,
        placement=ConnectorStacks(stack, 0),
    )
    template = app.synth().get_stack_by_name("JobOnly").template
    sizes = {}
    for policy in template["Resources"].values():
        if policy["Type"] == "AWS::IAM::Policy":
            for role in policy["Properties"]["Roles"]:
                sizes[role["Ref"]] = sizes.get(role["Ref"], 0) + len(_rendered(policy["Properties"]["PolicyDocument"]))
    assert len(sizes) == 50
    assert max(sizes.values()) < IAM_ROLE_INLINE_LIMIT, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def _rendered(document) -> str:
    """The document as IAM measures it (no whitespace), intrinsic functions replaced by 100-character strings."""

    def render(value):
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith(("Fn::", "Ref")):
            return "x" * 100
        if isinstance(value, dict):
            return {k: render(v) for k, v in value.items()}
        if isinstance(value, list):
            return [render(v) for v in value]
        return value

    return json.dumps(render(document), separators=(",", ":"))


def test_the_secrets_a_connector_references_and_only_those_may_be_read():
    """The job resolves ${secrets:...} when a run starts: GetSecretValue on each referenced secret, by name with
    Secrets Manager's six-character suffix or by its ARN, for the job role and the replay Lambda (which loads the
    connector's config the same way)."""
    from aws_cdk import Stack

    from infra.constructs.dlq_replay import replay_statements

    arn = "arn:aws:secretsmanager:us-east-1:222222222222:secret:registry-AbCdEf"
    spec = _with(
        ORDERS,
        **{
            "value.converter.basic.auth.user.info": "reader:${secrets:sr/orders:password}",
            "value.converter.schema.registry.url": f"https://r:${{secrets:{arn}:token}}@registry:8081",
        },
    )
    expected = [arn, "arn:aws:secretsmanager:us-east-1:222222222222:secret:sr/orders-??????"]
    assert _by_sid(spec)["ReadOwnSecrets"] == {
        "Sid": "ReadOwnSecrets",
        "Effect": "Allow",
        "Action": ["secretsmanager:GetSecretValue"],
        "Resource": expected,
    }
    assert "secretsmanager:GetSecretValue" not in _actions(ORDERS)
    replay = [Stack().resolve(s.to_json()) for s in replay_statements(SETTINGS, (spec, AUDIT), "arn:table")]
    assert [s["Resource"] for s in replay if s["Action"] == "secretsmanager:GetSecretValue"] == [expected]


def test_the_parameters_a_connector_references_and_only_those_may_be_read():
    """The job resolves ${ssm:...} when a run starts: ssm:GetParameter on each referenced parameter's ARN
    (`parameter/` and the name without its leading slash, or the ARN written), for the job role and the replay
    Lambda; no KMS grant (a SecureString under aws/ssm needs none)."""
    from aws_cdk import Stack

    from infra.constructs.dlq_replay import replay_statements

    arn = "arn:aws:ssm:eu-west-1:333333333333:parameter/shared/registry"
    spec = _with(
        ORDERS,
        **{
            "value.converter.basic.auth.user.info": "reader:${ssm:/sink/orders/registry:password}",
            "key.converter.basic.auth.user.info": f"reader:${{aws:ssm:{arn}}}",
            "aws.access.key.id": "${ssm:s3-key-id}",
            "aws.secret.access.key": "${ssm:/sink/orders/registry:s3}",
        },
    )
    expected = [
        arn,
        "arn:aws:ssm:us-east-1:222222222222:parameter/s3-key-id",
        "arn:aws:ssm:us-east-1:222222222222:parameter/sink/orders/registry",
    ]
    statements = _by_sid(spec)
    assert statements["ReadOwnParameters"] == {
        "Sid": "ReadOwnParameters",
        "Effect": "Allow",
        "Action": ["ssm:GetParameter"],
        "Resource": expected,
    }
    assert "ReadOwnSecrets" not in statements and "UseOwnKmsKey" not in statements
    assert not any(a.startswith("ssm:") for a in _actions(ORDERS))
    replay = [Stack().resolve(s.to_json()) for s in replay_statements(SETTINGS, (spec, AUDIT), "arn:table")]
    assert [s["Resource"] for s in replay if s["Action"] == "ssm:GetParameter"] == [expected]
    assert not any("secretsmanager" in json.dumps(s) for s in replay)


WRITER_ROLE = "arn:aws:iam::333333333333:role/lake-writer"
ASSUME_ROLE = {
    "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
    "s3.credentials.provider.sts.role.arn": WRITER_ROLE,
    "s3.credentials.provider.sts.role.session.name": "orders-sink",
    "s3.credentials.provider.sts.role.external.id": "ext-orders",
}


def test_a_connector_whose_s3_client_assumes_a_role_may_assume_exactly_that_role():
    """The S3 client signs as the assumed role, whose own policy grants the objects: the job role may assume it and
    keeps reading its config, and gets no object grant of its own."""
    statements = _by_sid(_with(dataclasses.replace(ORDERS, dlq_s3_prefix="dlq/orders-s3-sink"), **ASSUME_ROLE))
    assert statements["AssumeS3WriterRole"] == {
        "Sid": "AssumeS3WriterRole",
        "Effect": "Allow",
        "Action": ["sts:AssumeRole"],
        "Resource": [WRITER_ROLE],
    }
    assert {"WriteOwnPrefixes", "ListOwnUploads", "ReadOwnDeadLetters"}.isdisjoint(statements)
    assert "ReadOwnConfig" in statements
    assert not any(a.startswith("sts:") for a in _actions(ORDERS))


RESTORED = dataclasses.replace(ORDERS, restore_targets=("orders.restored", "payments.restored*"))


def test_without_restore_targets_the_job_role_cannot_read_its_objects_back_nor_write_a_topic():
    statements = _by_sid(ORDERS)
    assert {"ListOwnBackups", "ReadOwnBackups", "RestoreLease", "WriteRestoreTargets"}.isdisjoint(statements)
    assert "s3:ListBucket" not in _actions(ORDERS) and "kafka-cluster:WriteData" not in _actions(ORDERS)


def test_restore_targets_bring_reading_the_prefixes_the_lease_of_each_target_and_writing_exactly_the_targets():
    statements = _by_sid(RESTORED)
    bucket = f"arn:aws:s3:::{SETTINGS.bucket_name}"
    assert statements["ListOwnBackups"] == {
        "Sid": "ListOwnBackups",
        "Effect": "Allow",
        "Action": ["s3:ListBucket"],
        "Resource": [bucket],
        "Condition": {"StringLike": {"s3:prefix": [f"topics/{t}/*" for t in ORDERS.topics]}},
    }
    assert statements["ReadOwnBackups"]["Resource"] == [f"{bucket}/topics/{t}/*" for t in ORDERS.topics]
    assert statements["RestoreLease"]["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["restore#orders.restored", "restore#payments.restored*"]}
    }
    assert statements["RestoreLease"]["Action"] == [
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:ConditionCheckItem",
    ]
    msk = SETTINGS.msk
    assert statements["WriteRestoreTargets"] == {
        "Sid": "WriteRestoreTargets",
        "Effect": "Allow",
        "Action": ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData", "kafka-cluster:WriteData"],
        "Resource": [msk.resource_arn("topic", "orders.restored"), msk.resource_arn("topic", "payments.restored*")],
    }
    assert statements["WriteIdempotently"]["Resource"] == [msk.cluster_arn]
    assert "kafka-cluster:CreateTopic" not in _actions(RESTORED)


def test_restore_and_a_dead_letter_topic_share_one_idempotent_write_grant():
    statements = job_statements(dataclasses.replace(RESTORED, dlq_topic="orders-dlq"), NAMES)
    sids = [s["Sid"] for s in statements]
    assert len(sids) == len(set(sids)) and "WriteIdempotently" in sids


def test_with_an_assumed_s3_role_the_restore_reads_are_that_roles_to_grant():
    statements = _by_sid(_with(RESTORED, **ASSUME_ROLE))
    assert {"ListOwnBackups", "ReadOwnBackups"}.isdisjoint(statements)
    assert {"RestoreLease", "WriteRestoreTargets"} <= set(statements)


def test_a_connector_file_without_brokers_may_ask_msk_for_the_clusters():
    # given the example connector, whose file names no bootstrap.servers (a Connect worker setting), and the same
    # connector with its brokers in its file
    named = _with(ORDERS, **{"bootstrap.servers": "b-1.eventsprod.def456.c3.kafka.us-east-1.amazonaws.com:9098"})
    # then only the first job asks MSK for the brokers: kafka:GetBootstrapBrokers has no resource type in the SAR
    assert "bootstrap.servers" not in ORDERS.document["config"]
    assert _by_sid(ORDERS)["GetClusterBrokers"]["Action"] == ["kafka:GetBootstrapBrokers"]
    assert _by_sid(ORDERS)["GetClusterBrokers"]["Resource"] == ["*"]
    assert "kafka:GetBootstrapBrokers" not in _actions(named)
