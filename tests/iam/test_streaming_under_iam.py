"""A continuous connector's job under enforced IAM: the trigger's handler, as its role (its documents from the
synthesized template of dev with the test connector opted in), keeps one EMR Serverless STREAMING job run of
`sink-engine run --continuous` going, starts no second while it is active, cancels it with a grace period when the
job changed (a redeploy with another archive), and starts the next once it ended.

The EMR Serverless of this moto follows AWS's life cycle (tests/iam/emr_lifecycle.py: a run stays RUNNING until
cancelled, CANCELLING then CANCELLED; `mode`, `retryPolicy`, the timeout asked for and the grace period are kept as
sent, which moto 5.2.5 drops: docs/aws-fidelity.md), time counted in looks. Every AWS call the trigger makes is
recorded and checked against its role's documents with resource ARNs and conditions (tests/iam/evaluate.py), and
each of its EMR Serverless grants is needed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from tests.iam.actions import needs
from tests.iam.evaluate import allows
from tests.iam.functions import HANDLERS, LambdaContext, as_function
from tests.iam.policies import without_action
from tests.iam.recorder import CallLog
from tests.iam.streaming import RETRIES_PER_HOUR, StreamingWorld, streaming_world
from tests.lambdas.conftest import msk_event

TRIGGER = HANDLERS["trigger"]
MAPPED = ("emr-serverless", "dynamodb", "s3", "iam")  # the services tests/iam/actions.py maps (the tick's Lambda
# ListEventSourceMappings is checked in tests/iam/test_lambdas_under_iam.py's world)


@dataclass(frozen=True)
class Kept:
    here: StreamingWorld
    answers: dict[str, dict]
    runs_after_start: list[dict]
    runs: list[dict]
    log: CallLog


def _invoke(here: StreamingWorld, event: dict, log: CallLog, **environment: str) -> dict:
    with (
        as_function(here.deployed, here.principals["trigger"], TRIGGER, log) as handler,
        pytest.MonkeyPatch.context() as env,
    ):
        for name, value in environment.items():  # a redeploy changing the trigger's variables
            env.setenv(name, value)
        return handler(event, LambdaContext())


def _decision(answer: dict) -> dict:
    (decision,) = answer["decisions"]
    return decision


@pytest.fixture(scope="module")
def kept(tmp_path_factory) -> Kept:
    log = CallLog(tmp_path_factory.mktemp("streaming-calls") / "calls.jsonl")
    with streaming_world(tmp_path_factory.mktemp("streaming-synth")) as here:
        now = int(time.time() * 1000)
        answers = {"batch": _invoke(here, msk_event([("orders", 0, 0, now)]), log)}
        runs_after_start = here.runs()
        answers["again"] = _invoke(here, msk_event([("orders", 0, 1, now)]), log)
        answers["tick"] = _invoke(here, {"action": "idle-flush"}, log)
        # a redeploy with another job archive: the trigger's SPARK_PARAMETERS name it
        spark = here.deployed.environment(TRIGGER)["SPARK_PARAMETERS"].replace(".tgz#", "-2.tgz#")
        answers["redeployed"] = _invoke(here, {"action": "idle-flush"}, log, SPARK_PARAMETERS=spark)
        # each look moves the cancelled run on (CANCELLING, CANCELLING, CANCELLED); the job never ran here, so no
        # lease holds the next one back
        for look in range(4):
            answers[f"after-{look}"] = _invoke(here, {"action": "idle-flush"}, log, SPARK_PARAMETERS=spark)
        yield Kept(here, answers, runs_after_start, here.runs(), log)


def test_an_msk_batch_starts_the_connectors_streaming_job_run_as_the_triggers_role(kept):
    decision = _decision(kept.answers["batch"])
    assert (decision["action"], decision["reason"]) == ("started", "continuous"), decision
    (run,) = kept.runs_after_start
    # as sent: a STREAMING run with the job resiliency retry policy, never timed out, as the connector's job role
    assert run["mode"] == "STREAMING"
    assert run["retry_policy"] == {"maxFailedAttemptsPerHour": RETRIES_PER_HOUR}
    assert run["requested_timeout_minutes"] == 0
    assert run["execution_role_arn"] == kept.here.principals["job"].arn
    assert run["job_driver"]["sparkSubmit"]["entryPointArguments"] == [
        "run",
        "--continuous",
        "--config",
        kept.here.index[0]["config_uri"],
    ]


def test_while_it_is_active_a_batch_or_a_tick_starts_no_second(kept):
    for answer in (kept.answers["again"], kept.answers["tick"]):
        decision = _decision(answer)
        assert (decision["action"], decision["reason"]) == ("skipped", "run-active"), decision
    assert kept.answers["tick"]["cancelled"] == []  # the sweep leaves the run its claim owns


def test_a_changed_job_cancels_the_run_with_its_grace_period_and_the_next_starts_once_it_ended(kept):
    first, second = kept.runs
    decision = _decision(kept.answers["redeployed"])
    assert (decision["action"], decision["reason"], decision["job_run_id"]) == (
        "cancelled",
        "config-changed",
        first["id"],
    )
    assert first["state"] == "CANCELLED"
    # the connector's lease (20 s) and the job's stop margin (30 s)
    assert first["shutdown_grace_period_in_seconds"] == kept.here.index[0]["continuous"]["shutdown_grace_seconds"] == 50
    reasons = [_decision(kept.answers[f"after-{look}"])["reason"] for look in range(4)]
    assert reasons[: reasons.index("continuous")] == ["run-stopping"] * reasons.index("continuous")
    assert second["mode"] == "STREAMING" and second["tags"]["attempt"] == "2"
    assert [_decision(kept.answers[f"after-{look}"])["action"] for look in range(4)].count("started") == 1


def _trigger_needs(kept: Kept):
    name = kept.here.principals["trigger"].name
    return [
        n
        for c in kept.log.calls()
        if c.principal == name and c.service in MAPPED
        for n in needs(c, kept.here.deployed.facts())
    ]


def test_every_call_is_granted_by_the_triggers_documents_and_each_emr_grant_is_needed(kept):
    trigger = kept.here.principals["trigger"]
    found = _trigger_needs(kept)
    assert sorted({str(n) for n in found if not allows(trigger.documents, n)}) == []
    emr = {n.action for n in found if n.action.startswith(("emr-serverless:", "iam:"))}
    assert emr == {
        "emr-serverless:StartJobRun",
        "emr-serverless:TagResource",
        "iam:PassRole",
        "emr-serverless:GetJobRun",
        "emr-serverless:ListJobRuns",
        "emr-serverless:CancelJobRun",
    }
    for action in emr:
        reduced = without_action(list(trigger.documents), action)
        assert [n for n in found if n.action == action and not allows(reduced, n)], action
    # on the application's and the run's ARNs
    application = next(n.resource for n in found if n.action == "emr-serverless:ListJobRuns")
    assert application.endswith(f":/applications/{kept.here.application}")
    cancelled = {n.resource for n in found if n.action == "emr-serverless:CancelJobRun"}
    assert cancelled == {f"{application}/jobruns/{kept.runs[0]['id']}"}
