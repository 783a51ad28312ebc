"""The trigger keeping a continuous connector's job running (lambdas/trigger/continuous.py), against moto (in-process)
on a fixed clock, fed AWS-shaped MSK events and ticks.

Given a connector whose index entry says `continuous`, when batches, ticks and forced runs arrive, then exactly one
EMR Serverless STREAMING job run of `sink-engine run --continuous` is active at a time, started again after it ends
(after the backoff when it failed), cancelled with a grace period when its config or the job changed (and started
again at once after it ended), and cancelled by the tick when the connector no longer opts in or is gone.

moto's StartJobRun keeps neither `mode` nor `retryPolicy`, and its CancelJobRun drops `shutdownGracePeriodInSeconds`
(docs/aws-fidelity.md): the requests are read as the trigger sent them (a botocore hook on the clients' parameters).
"""

from __future__ import annotations

import copy
import shlex

import boto3
import pytest

from lambdas.trigger import handler as trigger
from lambdas.trigger.sizing import RunShape, continuous_run
from tests.connector_index import publish_index
from tests.lambdas.conftest import T0, msk_event

ORDERS, CLICKS = "orders-s3-sink", "clicks-s3-sink"
ROLE = "arn:aws:iam::123456789012:role/orders-job"
CLAIM_MS, BASE_MS, CAP_MS, GRACE_S, RETRIES = 900_000, 60_000, 3_600_000, 150, 7
INDEX_URI = "s3://lake/_connectors/_index.json"
CONFIG_SHA = "a" * 64
ORDERS_ENTRY = {
    "name": ORDERS,
    "topics": ["orders"],
    "config_uri": "s3://lake/_connectors/orders-s3-sink.json",
    "role_arn": ROLE,
    "tables": False,
    "rotation": {
        "flush.size": 100_000,
        "rotate.schedule.interval.ms": 5_000,
        "rotate.interval.ms": -1,
        "timestamp.extractor": "record",
        "timezone": "UTC",
    },
    "sizing": {"tasks.max": 6, "format.class": "json", "sink.run.max.records.per.partition": 1_000_000},
    "continuous": {
        "max_failed_attempts_per_hour": RETRIES,
        "shutdown_grace_seconds": GRACE_S,
        "config_sha256": CONFIG_SHA,
    },
}
CLICKS_ENTRY = {
    **copy.deepcopy(ORDERS_ENTRY),
    "name": CLICKS,
    "topics": ["clicks"],
    "config_uri": "s3://lake/_connectors/clicks-s3-sink.json",
}
del CLICKS_ENTRY["continuous"]


@pytest.fixture
def sent(aws) -> dict[str, list[dict]]:
    """The EMR Serverless requests the trigger's clients send, by operation, as sent (before moto reads them)."""
    seen: dict[str, list[dict]] = {}

    def record(params, model, **_):
        seen.setdefault(model.name, []).append(copy.deepcopy(params))

    boto3.setup_default_session()
    boto3.DEFAULT_SESSION.events.register("provide-client-params.emr-serverless", record)
    return seen


@pytest.fixture
def environment(table, sent, monkeypatch, clock) -> dict[str, str]:
    emr = boto3.client("emr-serverless")
    application = emr.create_application(name="sink-test", releaseLabel="emr-7.12.0", type="SPARK")["applicationId"]
    env = {
        "TABLE_NAME": table,
        "APPLICATION_ID": application,
        "ENTRY_POINT": "s3://assets/entrypoint.py",
        "SPARK_PARAMETERS": "--conf spark.archives=s3://assets/env.tgz#environment",
        "JOB_TIMEOUT_MINUTES": "75",
        "MAX_CPU": "32 vCPU",
        "MAX_MEMORY": "128 GB",
        "MAX_DISK": "640 GB",
        "MAX_EXECUTORS_PER_RUN": "3",
        "RUN_CLAIM_MS": str(CLAIM_MS),
        "BACKOFF_BASE_MS": str(BASE_MS),
        "BACKOFF_CAP_MS": str(CAP_MS),
        "POWERTOOLS_SERVICE_NAME": "sink-trigger",
        "CONNECTORS_URI": INDEX_URI,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    publish_index(INDEX_URI, [ORDERS_ENTRY, CLICKS_ENTRY])
    _serve(env, clock, monkeypatch)
    return env


def _serve(environment: dict[str, str], clock, monkeypatch) -> None:
    service = trigger.build_service(environment, clock)
    monkeypatch.setattr(trigger, "_service", lambda: service)


def _republish(environment, clock, monkeypatch, *entries: dict) -> None:
    """A deploy: the admin publishes another index; the trigger reads it (a cold start, or its copy's TTL)."""
    publish_index(INDEX_URI, list(entries))
    _serve(environment, clock, monkeypatch)


def _set_run_state(app_id: str, job_run_id: str, state: str) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.emrserverless.models import emrserverless_backends

    backend = emrserverless_backends[DEFAULT_ACCOUNT_ID]["eu-west-1"]
    next(r for r in backend.job_runs[app_id] if r.id == job_run_id).state = state


def _lease(table: str, connector: str, expires_at_ms: int, epoch: int) -> None:
    boto3.client("dynamodb").put_item(
        TableName=table,
        Item={
            "pk": {"S": connector},
            "sk": {"S": "LEASE"},
            "owner": {"S": f"run-{epoch}"},
            "epoch": {"N": str(epoch)},
            "expires_at_ms": {"N": str(expires_at_ms)},
        },
    )


def _commit(table: str, connector: str, next_offset: int, at_ms: int) -> None:
    boto3.client("dynamodb").put_item(
        TableName=table,
        Item={
            "pk": {"S": connector},
            "sk": {"S": "OFFSET#orders#0"},
            "topic": {"S": "orders"},
            "partition": {"N": "0"},
            "next_offset": {"N": str(next_offset)},
            "epoch": {"N": "1"},
            "committed_at_ms": {"N": str(at_ms)},
        },
    )


def _batch(context, offset: int, count: int = 1, ts: int = T0) -> list[dict]:
    records = [("orders", 0, o, ts) for o in range(offset, offset + count)]
    return trigger.handler(msk_event(records), context)["decisions"]


def _tick(context) -> dict:
    return trigger.handler({"action": "idle-flush"}, context)


def _decision(decisions: list[dict], connector: str = ORDERS) -> dict:
    (found,) = [d for d in decisions if d["connector"] == connector]
    return found


def _orders(requests: list[dict]) -> list[dict]:
    return [r for r in requests if r["tags"]["connector"] == ORDERS]


def _confs(request: dict) -> dict[str, str]:
    parameters = shlex.split(request["jobDriver"]["sparkSubmit"]["sparkSubmitParameters"])
    return dict(p.split("=", 1) for p in parameters if "=" in p)


@pytest.fixture
def started(environment, context, sent, clock) -> dict:
    """One record on an orders partition, far from closing any file: the connector's continuous job starts."""
    decision = _decision(_batch(context, 0))
    assert (decision["action"], decision["reason"]) == ("started", "continuous"), decision
    _set_run_state(environment["APPLICATION_ID"], decision["job_run_id"], "RUNNING")
    return decision


def test_any_batch_starts_the_connectors_streaming_job_run_as_its_role(started, sent, environment):
    (request,) = sent["StartJobRun"]
    # a STREAMING run (release 7.1.0+) with the job resiliency retry policy, never timed out
    assert request["mode"] == "STREAMING"
    assert request["retryPolicy"] == {"maxFailedAttemptsPerHour": RETRIES}
    assert request["executionTimeoutMinutes"] == 0
    assert request["executionRoleArn"] == ROLE
    assert request["jobDriver"]["sparkSubmit"]["entryPoint"] == environment["ENTRY_POINT"]
    assert request["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "run",
        "--continuous",
        "--config",
        "s3://lake/_connectors/orders-s3-sink.json",
    ]
    assert request["tags"] == {
        "connector": ORDERS,
        "attempt": "1",
        "mode": "continuous",
        "shutdown_grace_seconds": str(GRACE_S),
    }
    # each of its tasks.max (6) long-lived tasks gets an executor core: two 4-vCPU executors, dynamic allocation off
    confs = _confs(request)
    assert confs["spark.archives"] == "s3://assets/env.tgz#environment"
    assert int(confs["spark.executor.cores"]) * int(confs["spark.executor.instances"]) >= 6
    assert confs["spark.dynamicAllocation.enabled"] == "false"
    plan = continuous_run(RunShape(6, "json", 1_000_000), 3)
    assert (int(confs["spark.executor.cores"]), int(confs["spark.executor.instances"])) == (
        plan.executor.vcpu,
        plan.executors,
    )


def test_while_it_runs_no_batch_tick_or_forced_run_starts_a_second(started, sent, context, clock):
    for event in ("batch", "tick", "run"):
        clock.advance(30_000)
        if event == "batch":
            decision = _decision(_batch(context, 1, 1_000))
        elif event == "tick":
            decision = _decision(_tick(context)["decisions"])
        else:
            decision = trigger.handler({"action": "run", "connector": ORDERS}, context)["decisions"][0]
        assert (decision["action"], decision["reason"], decision["job_run_id"]) == (
            "skipped",
            "run-active",
            started["job_run_id"],
        )
    assert [r["name"] for r in sent["StartJobRun"] if r["tags"]["connector"] == ORDERS] == [f"{ORDERS}-continuous-1"]
    assert "CancelJobRun" not in sent


def test_a_bounded_connector_beside_it_keeps_its_rules(started, context):
    (clicks,) = [d for d in _tick(context)["decisions"] if d["connector"] == CLICKS]
    assert (clicks["action"], clicks["reason"]) == ("started", "first-run")  # bounded: no run committed yet


def test_a_failed_run_is_started_again_after_the_backoff_with_a_new_token(started, sent, environment, context, clock):
    _set_run_state(environment["APPLICATION_ID"], started["job_run_id"], "FAILED")  # its retries spent
    clock.advance(10_000)
    decision = _decision(_batch(context, 1))
    assert (decision["action"], decision["reason"], decision["retry_at_ms"]) == (
        "skipped",
        "backoff",
        clock() + BASE_MS,
    )
    clock.advance(BASE_MS)
    decision = _decision(_tick(context)["decisions"])
    assert (decision["action"], decision["reason"]) == ("started", "continuous")
    first, second = _orders(sent["StartJobRun"])
    assert first["clientToken"] != second["clientToken"] and second["tags"]["attempt"] == "2"


def test_a_run_that_made_progress_before_failing_starts_a_new_failure_streak(
    started, environment, table, context, clock
):
    # two failures in a row would wait 2 x base; a run that took the lease and committed counts as the first
    _set_run_state(environment["APPLICATION_ID"], started["job_run_id"], "FAILED")
    assert _decision(_tick(context)["decisions"])["reason"] == "backoff"
    clock.advance(BASE_MS)
    second = _decision(_tick(context)["decisions"])
    assert second["action"] == "started"
    _lease(table, ORDERS, expires_at_ms=0, epoch=1)
    _commit(table, ORDERS, 500, clock() + 1_000)
    clock.advance(3_600_000)
    _set_run_state(environment["APPLICATION_ID"], second["job_run_id"], "FAILED")
    decision = _decision(_tick(context)["decisions"])
    assert (decision["reason"], decision["retry_at_ms"]) == ("backoff", clock() + BASE_MS)


def test_while_its_run_holds_the_lease_no_emr_call_is_made_and_nothing_starts_until_it_is_free(
    started, sent, environment, table, context, clock
):
    # the run took the lease and renews it: a batch or a tick knows it is active without asking EMR
    _lease(table, ORDERS, expires_at_ms=clock() + 60_000, epoch=1)
    asked = len(sent.get("GetJobRun", []))
    assert _decision(_batch(context, 1))["reason"] == "run-active"
    assert len(sent.get("GetJobRun", [])) == asked
    # it ended (a cancellation by hand with a grace period: it committed, and releases its lease as it stops)
    _commit(table, ORDERS, 500, clock() + 1_000)
    clock.advance(2_000)
    _set_run_state(environment["APPLICATION_ID"], started["job_run_id"], "SUCCESS")
    assert _decision(_tick(context)["decisions"])["reason"] == "run-active"  # its lease is not free yet
    _lease(table, ORDERS, expires_at_ms=0, epoch=1)
    assert _decision(_tick(context)["decisions"])["action"] == "started"


def test_two_invocations_at_once_start_one_run_and_a_lost_answer_is_resumed_with_the_same_token(
    environment, sent, context, clock, monkeypatch
):
    from lambdas.trigger.state import TriggerState

    # the first StartJobRun's answer is lost (its run id not recorded): the claim is resumed, not doubled
    with pytest.MonkeyPatch.context() as lost:
        lost.setattr(TriggerState, "record_job_run", lambda *a, **k: None)
        first = _decision(_batch(context, 0))
    again = _decision(_batch(context, 1))
    assert (first["action"], again["action"]) == ("started", "resumed")
    one, other = _orders(sent["StartJobRun"])
    assert one["clientToken"] == other["clientToken"]  # EMR Serverless returns the run already started


@pytest.mark.parametrize("change", ["config", "retries", "job"])
def test_a_changed_config_or_job_cancels_the_run_with_its_grace_period_then_starts_the_new_one_at_once(
    change, started, sent, environment, table, context, clock, monkeypatch
):
    entry = copy.deepcopy(ORDERS_ENTRY)
    if change == "config":
        entry["continuous"]["config_sha256"] = "b" * 64
    elif change == "retries":
        entry["continuous"]["max_failed_attempts_per_hour"] = 3
    else:  # a redeploy with another job archive
        environment = {**environment, "SPARK_PARAMETERS": "--conf spark.archives=s3://assets/env-2.tgz#environment"}
    _republish(environment, clock, monkeypatch, entry, CLICKS_ENTRY)
    decision = _decision(_tick(context)["decisions"])
    assert (decision["action"], decision["reason"], decision["job_run_id"]) == (
        "cancelled",
        "config-changed",
        started["job_run_id"],
    )
    (cancel,) = sent["CancelJobRun"]
    assert (cancel["jobRunId"], cancel["shutdownGracePeriodInSeconds"]) == (started["job_run_id"], GRACE_S)
    # while it stops (its lease held: the job commits what it closed, then releases it), nothing starts
    _set_run_state(environment["APPLICATION_ID"], started["job_run_id"], "CANCELLING")
    _lease(table, ORDERS, expires_at_ms=clock() + 120_000, epoch=1)
    assert _decision(_batch(context, 1))["reason"] == "run-stopping"
    _set_run_state(environment["APPLICATION_ID"], started["job_run_id"], "CANCELLED")
    assert _decision(_tick(context)["decisions"])["reason"] == "run-stopping"  # until it released its lease
    _lease(table, ORDERS, expires_at_ms=0, epoch=1)
    clock.advance(1_000)
    # then the new run starts at once: the cancellation was the trigger's, no failure, no backoff
    decision = _decision(_tick(context)["decisions"])
    assert (decision["action"], decision["reason"]) == ("started", "continuous")
    new = _orders(sent["StartJobRun"])[-1]
    assert new["tags"]["attempt"] == "2"
    assert new["retryPolicy"] == {"maxFailedAttemptsPerHour": entry["continuous"]["max_failed_attempts_per_hour"]}


@pytest.mark.parametrize("opted_out", ["no-longer-continuous", "removed"])
def test_the_tick_cancels_the_job_of_a_connector_that_no_longer_runs_continuously(
    opted_out, started, sent, environment, table, context, clock, monkeypatch
):
    bounded = {k: v for k, v in ORDERS_ENTRY.items() if k != "continuous"}
    _republish(
        environment, clock, monkeypatch, *([bounded, CLICKS_ENTRY] if opted_out != "removed" else [CLICKS_ENTRY])
    )
    answer = _tick(context)
    assert answer["cancelled"] == [
        {"connector": ORDERS, "job_run_id": started["job_run_id"], "reason": "not-continuous"}
    ]
    (cancel,) = sent["CancelJobRun"]
    assert cancel["shutdownGracePeriodInSeconds"] == GRACE_S  # from the run's tags: the connector's entry may be gone
    # moto: CANCELLED at once; the next tick cancels nothing more
    assert _tick(context)["cancelled"] == []
    if opted_out == "no-longer-continuous":  # its bounded runs follow the rules again, with no backoff
        _lease(table, ORDERS, expires_at_ms=0, epoch=1)
        decision = _decision(trigger.handler({"action": "run", "connector": ORDERS}, context)["decisions"])
        assert decision["action"] == "started"
        assert _orders(sent["StartJobRun"])[-1].get("mode") is None  # bounded (BATCH: the default mode)


def test_the_tick_cancels_a_streaming_run_its_claim_does_not_own(started, sent, environment, context):
    # a STREAMING run of an earlier attempt (its StartJobRun retried after the claim moved on, say)
    emr = boto3.client("emr-serverless")
    stray = emr.start_job_run(
        **{**sent["StartJobRun"][0], "clientToken": "stray", "tags": {**sent["StartJobRun"][0]["tags"], "attempt": "0"}}
    )["jobRunId"]
    _set_run_state(environment["APPLICATION_ID"], stray, "RUNNING")
    assert _tick(context)["cancelled"] == [{"connector": ORDERS, "job_run_id": stray, "reason": "superseded"}]
    assert [c["jobRunId"] for c in sent["CancelJobRun"]] == [stray]  # the claimed run goes on
