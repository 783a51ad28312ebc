"""A restore as deployed, under enforced IAM: the trigger, as its role, turns `{"action": "restore", ...}` into a
StartJobRun as the connector's job role; that run's arguments, run as the job role (documents from the synthesized
template, whose environment settings give the connector restore targets), restore the objects the session's engine
run wrote into the target topic, each record once, a rerun producing nothing. Every AWS call of both is granted by
the role's documents with conditions evaluated (tests/iam/evaluate.py: the `restore#<target>` leading keys, the
listing's `s3:prefix`, which moto ignores); without a restore grant the restore fails naming the refused call.

Kafka grants (WriteRestoreTargets, WriteIdempotently) cannot be enforced here: the local broker has no IAM. They
are checked statically (tests/infra/test_job_policy.py, and the topic ARNs against the deployment in
test_policies.py)."""

from __future__ import annotations

import pytest

from devtools.producer import create_topic
from sink_engine.restore.target import TARGET_CONFIG
from tests.iam.acting import acting_as
from tests.iam.actions import needs
from tests.iam.engine import PARTITIONS, CliResult, run_cli
from tests.iam.evaluate import allows
from tests.iam.functions import HANDLERS, LambdaContext, as_function
from tests.iam.physical import MOTO_ACCOUNT
from tests.iam.policies import PolicyDocument, without_action
from tests.iam.recorder import CallLog
from tests.restore_runs import counts, topic_records

TOPIC, TARGET = "orders", "orders.restored"


@pytest.fixture(scope="module")
def restore_log(tmp_path_factory) -> CallLog:
    return CallLog(tmp_path_factory.mktemp("iam-restore-calls") / "calls.jsonl")


@pytest.fixture(scope="module")
def requested(engine_run, deployed, principals, iam_stack, world, restore_log) -> dict:
    """The restore of the engine run's `orders` objects asked of the trigger, as the trigger role: the job run it
    started (GetJobRun: moto's state API answers 500 once test_multipart_under_iam.py ran)."""
    create_topic(iam_stack.bootstrap_servers, TARGET, PARTITIONS[TOPIC], TARGET_CONFIG)
    event = {"action": "restore", "connector": deployed.synthesized.connector, "topic": TOPIC, "target_topic": TARGET}
    with as_function(deployed, principals["trigger"], HANDLERS["trigger"], restore_log) as handler:
        answer = handler(event, LambdaContext())["restore"]
    assert answer["action"] == "started", answer
    application = deployed.environment(HANDLERS["trigger"])["APPLICATION_ID"]
    emr = world.admin.client("emr-serverless")
    return emr.get_job_run(applicationId=application, jobRunId=answer["job_run_id"])["jobRun"]


@pytest.fixture(scope="module")
def restored(requested, principals, restore_log) -> tuple[CliResult, CliResult]:
    """The job run's arguments run as the job role (the job's entry point calls the CLI with them), twice."""
    arguments = requested["jobDriver"]["sparkSubmit"]["entryPointArguments"]
    with acting_as(principals["job"], restore_log):
        return run_cli(*arguments), run_cli(*arguments)


def test_the_trigger_starts_the_restore_as_the_connectors_job_role(requested, principals, config_uri):
    assert requested["executionRole"] == principals["job"].arn
    assert requested["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "restore",
        "--config",
        config_uri,
        "--topic",
        TOPIC,
        "--target-topic",
        TARGET,
    ]


def test_the_restore_as_the_job_role_produces_each_backed_up_record_once(restored, engine_run, iam_stack):
    first, again = restored
    assert first.code == 0, first.err
    good = engine_run.workload.good[TOPIC]  # the bad records of orders-0 were dead-lettered, not backed up
    assert sum(produced for _, _, produced in counts(first.out).values()) == good
    assert again.code == 0, again.err
    assert [(present, produced) for _, present, produced in counts(again.out).values()] == [
        (good // PARTITIONS[TOPIC], 0)
    ] * PARTITIONS[TOPIC]
    assert sum(len(records) for records in topic_records(iam_stack.bootstrap_servers, TARGET).values()) == good


def _needs(log: CallLog, principal, deployed) -> list:
    return [n for call in log.calls() if call.principal == principal.name for n in needs(call, deployed.facts())]


def test_every_call_of_the_trigger_and_the_restore_is_granted_with_its_conditions(
    restored, restore_log, principals, deployed
):
    for role in ("trigger", "job"):
        found = _needs(restore_log, principals[role], deployed)
        assert found, role
        assert sorted({str(n) for n in found if not allows(principals[role].documents, n)}) == []
    job = _needs(restore_log, principals["job"], deployed)
    # the listing under the connector's prefix, and the lease and checkpoint under the target's own key
    assert {n.context.get("s3:prefix") for n in job if n.action == "s3:ListBucket"} == {f"topics/{TOPIC}/"}
    assert {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:ConditionCheckItem"} <= {
        n.action for n in job if n.context.get("dynamodb:LeadingKeys") == [f"restore#{TARGET}"]
    }


def test_the_restore_start_needs_each_of_the_triggers_run_grants_and_no_other(
    requested, restore_log, principals, deployed
):
    # the trigger's StartJobRun of the restore: the run on the application, passing the job role, tagged
    trigger = principals["trigger"]
    started = [n for n in _needs(restore_log, trigger, deployed) if n.call.operation == "StartJobRun"]
    application = (
        f"arn:aws:emr-serverless:{deployed.synthesized.settings.region}:{MOTO_ACCOUNT}:/applications/"
        + deployed.environment(HANDLERS["trigger"])["APPLICATION_ID"]
    )
    assert {(n.action, n.resource) for n in started} == {
        ("emr-serverless:StartJobRun", application),
        ("iam:PassRole", principals["job"].arn),
        ("emr-serverless:TagResource", f"{application}/jobruns/*"),
    }
    # each grant is needed: without it the start is denied
    assert all(
        allows(trigger.documents, n) and not allows(without_action(list(trigger.documents), n.action), n)
        for n in started
    )
    # and the trigger is granted nothing else on EMR Serverless or IAM but GetJobRun, which it calls to learn the
    # state of the run of a claim (lambdas/trigger/runs.py `job_state`), and CancelJobRun and ListJobRuns, with
    # which it stops continuous connectors' jobs (lambdas/trigger/continuous.py; tests/iam/test_streaming_under_iam.py)
    granted = {
        a
        for d in trigger.documents
        for s in d.statements
        if s["Effect"] == "Allow"
        for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        if a.startswith(("emr-serverless:", "iam:"))
    }
    assert granted == {n.action for n in started} | {
        "emr-serverless:GetJobRun",
        "emr-serverless:CancelJobRun",
        "emr-serverless:ListJobRuns",
    }


def _without_statement(documents: list[PolicyDocument], sid: str) -> list[PolicyDocument]:
    kept = [
        PolicyDocument(d.source, {**d.document, "Statement": [s for s in d.statements if s.get("Sid") != sid]})
        for d in documents
    ]
    assert sum(len(d.statements) for d in kept) == sum(len(d.statements) for d in documents) - 1, sid
    return kept


def test_without_its_restore_lease_statement_the_lease_calls_are_denied(restored, restore_log, principals, deployed):
    job = _needs(restore_log, principals["job"], deployed)
    reduced = _without_statement(principals["job"].documents, "RestoreLease")
    denied = [n for n in job if not allows(reduced, n)]
    assert denied and all(n.context.get("dynamodb:LeadingKeys") == [f"restore#{TARGET}"] for n in denied)


@pytest.mark.parametrize("sid, operation", [("ListOwnBackups", "ListObjectsV2"), ("ReadOwnBackups", "GetObject")])
def test_without_a_read_grant_the_restore_fails_naming_the_refused_call(
    sid, operation, restored, deployed, world, role_ids, iam_stack, config_uri
):
    # given the job role without the statement that lets a restore list, or read, the connector's objects
    principal = world.role(f"job-without-{sid}", _without_statement(deployed.documents(role_ids["job"]), sid))
    target = f"{TARGET}.{sid.lower()}"
    create_topic(iam_stack.bootstrap_servers, target, PARTITIONS[TOPIC], TARGET_CONFIG)
    # when the restore runs as it
    with acting_as(principal):
        result = run_cli("restore", "--config", config_uri, "--topic", TOPIC, "--target-topic", target)
    # then it fails naming the call S3 refused, and produced nothing
    assert result.code != 0, result.out
    assert "AccessDenied" in result.err and operation in result.err and sid in result.err, result.err
    assert not any(topic_records(iam_stack.bootstrap_servers, target).values())
