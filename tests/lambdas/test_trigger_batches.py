"""Triggered runs batched (lambdas/trigger/batches.py), against moto (in-process) on a fixed clock: the connectors due
at one tick start in few job runs, each `run --config A --config B ...` as their shared job role, within
StartJobRun's burst; every connector is served once, and one whose run is under way or whose lease is held is not
started again."""

from __future__ import annotations

from collections import Counter

import boto3
import pytest
from botocore.exceptions import ClientError

from lambdas.trigger import handler as trigger
from lambdas.trigger.batches import START_BURST, batch_token, compose, run_arguments
from tests.connector_index import publish_index
from tests.lambdas.test_trigger_handler import BASE_MS, INDEX_URI, environment  # noqa: F401 (fixture)
from tests.lambdas.test_trigger_handler import DEFAULT_ROLE as ROLE


def _entry(i: int, role: str | None = None) -> dict:
    """Connector c<i> reading topic t<i>, a file every 1,000 records; no offset committed: its first run is due."""
    rotation = {
        "flush.size": 1000,
        "rotate.schedule.interval.ms": 600_000,
        "rotate.interval.ms": -1,
        "timestamp.extractor": "wallclock",
        "timezone": "UTC",
    }
    entry = {"name": f"c{i}", "topics": [f"t{i}"], "config_uri": f"s3://lake/_connectors/c{i}.json"}
    return {**entry, "rotation": rotation, **({"role_arn": role} if role else {})}


@pytest.fixture
def serve(environment, clock, monkeypatch):
    """Publish `entries` and serve the trigger (its StartJobRun calls recorded in `calls`), optionally with
    CONNECTORS_PER_RUN; returns the calls, one list of requests per invocation."""

    def served(entries: list[dict], per_run: int | None = None) -> list[list[dict]]:
        publish_index(INDEX_URI, entries)
        env = {**environment, **({"CONNECTORS_PER_RUN": str(per_run)} if per_run else {})}
        service = trigger.build_service(env, clock)
        monkeypatch.setattr(trigger, "_service", lambda: service)
        emr, calls = service._batches._emr, []
        real = emr.start_job_run

        def recorded(**request):
            calls[-1].append(request)
            return real(**request)

        monkeypatch.setattr(emr, "start_job_run", recorded)
        return calls

    return served


def _tick(context, calls: list[list[dict]]) -> list[dict]:
    calls.append([])
    return trigger.handler({"action": "idle-flush"}, context)["decisions"]


def _configs(request: dict) -> list[str]:
    arguments = request["jobDriver"]["sparkSubmit"]["entryPointArguments"]
    assert arguments[0] == "run" and arguments[1::2] == ["--config"] * ((len(arguments) - 1) // 2)
    return arguments[2::2]


def _set_state(app_id: str, job_run_id: str, state: str) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.emrserverless.models import emrserverless_backends

    backend = emrserverless_backends[DEFAULT_ACCOUNT_ID]["eu-west-1"]
    next(r for r in backend.job_runs[app_id] if r.id == job_run_id).state = state


def _claim(table: str, connector: str) -> dict:
    key = {"pk": {"S": connector}, "sk": {"S": "RUN"}}
    return boto3.client("dynamodb").get_item(TableName=table, Key=key)["Item"]


def test_500_connectors_due_on_one_tick_start_in_20_runs_each_served_once(serve, context, table, environment):
    # given 500 connectors of one job role, each with its first run due
    calls = serve([_entry(i) for i in range(500)])
    # when the tick decides
    decisions = _tick(context, calls)
    # then 20 StartJobRun calls of 25 connectors each (within the burst of 25), every connector in exactly one
    (made,) = calls
    assert len(made) == 20 <= START_BURST
    served = Counter(config for request in made for config in _configs(request))
    assert served == Counter(f"s3://lake/_connectors/c{i}.json" for i in range(500))
    assert {request["executionRoleArn"] for request in made} == {ROLE}
    # and each connector's decision and claim name the run that serves it
    run_of = {config: request for request in made for config in _configs(request)}
    runs = boto3.client("emr-serverless").list_job_runs(applicationId=environment["APPLICATION_ID"])["jobRuns"]
    ids = {r["name"]: r["id"] for r in runs}
    assert len(ids) == 20
    for decision in decisions:
        name = decision["connector"]
        request = run_of[f"s3://lake/_connectors/{name}.json"]
        assert (decision["action"], decision["reason"]) == ("started", "first-run")
        assert decision["job_run_id"] == ids[request["name"]] == _claim(table, name)["job_run_id"]["S"]


def test_a_connector_whose_run_is_under_way_or_whose_lease_is_held_is_not_started_again(
    serve, context, table, environment, clock
):
    # given 60 due connectors started in runs of 25, 25 and 10
    calls = serve([_entry(i) for i in range(60)])
    first = {d["connector"]: d["job_run_id"] for d in _tick(context, calls)}
    # and the run serving c0 still running, the others ended (moto: at once) without taking a lease (failed),
    # and c59 held by a run of its own meanwhile
    _set_state(environment["APPLICATION_ID"], first["c0"], "RUNNING")
    boto3.client("dynamodb").put_item(
        TableName=table,
        Item={
            "pk": {"S": "c59"},
            "sk": {"S": "LEASE"},
            "owner": {"S": "x"},
            "epoch": {"N": "1"},
            "expires_at_ms": {"N": str(clock() + 10 * BASE_MS)},
        },
    )
    # when a tick sees the failed runs (their backoff starts) and the next comes after the backoff
    _tick(context, calls)
    clock.advance(BASE_MS + 1)
    again = {d["connector"]: (d["action"], d["reason"], d["job_run_id"]) for d in _tick(context, calls)}
    # then the 25 connectors of the running run are left to it, c59 to its lease holder
    running = [name for name, run in first.items() if run == first["c0"]]
    assert len(running) == 25
    assert {again[name] for name in running} == {("skipped", "run-active", first["c0"])}
    assert again["c59"][:2] == ("skipped", "lease-held")
    # and the 34 others start again, once each, in two runs
    assert calls[1] == []
    restarted = Counter(config for request in calls[2] for config in _configs(request))
    assert len(calls[2]) == 2 and sum(restarted.values()) == 34 and set(restarted.values()) == {1}
    assert not {f"s3://lake/_connectors/{name}.json" for name in [*running, "c59"]} & set(restarted)


def test_runs_past_the_burst_wait_for_the_next_invocation_keeping_their_claims(serve, context, clock):
    # given 60 due connectors and 2 connectors a run: 30 runs, past the burst of 25
    calls = serve([_entry(i) for i in range(60)], per_run=2)
    decisions = _tick(context, calls)
    # then the tick makes 25 calls and leaves 10 connectors for later
    assert len(calls[0]) == START_BURST
    waiting = sorted(d["connector"] for d in decisions if d["reason"] == "start-budget")
    assert len(waiting) == 10
    # when the next tick comes (the burst refilled), then those 10 start, in 5 runs, and no other
    clock.advance(30_000)
    later = _tick(context, calls)
    assert len(calls[1]) == 5
    started = sorted(d["connector"] for d in later if d["action"] in ("started", "resumed"))
    assert started == waiting
    served = Counter(config for made in calls for request in made for config in _configs(request))
    assert len(served) == 60 and set(served.values()) == {1}


def test_connectors_of_different_job_roles_never_share_a_run(serve, context):
    roles = [f"arn:aws:iam::123456789012:role/job-{i % 3}" for i in range(9)]
    calls = serve([_entry(i, role) for i, role in enumerate(roles)])
    _tick(context, calls)
    assert len(calls[0]) == 3
    for request in calls[0]:
        members = {int(c.rsplit("/c", 1)[1].removesuffix(".json")) for c in _configs(request)}
        assert {roles[i] for i in members} == {request["executionRoleArn"]}


def test_a_refused_start_is_resumed_with_the_same_request(serve, context, table, clock, monkeypatch):
    # given a tick whose StartJobRun of a run of 3 connectors is refused (throttled)
    calls = serve([_entry(i) for i in range(3)])
    emr = trigger._service()._batches._emr
    recorded = emr.start_job_run

    def refuse(**request):
        calls[-1].append(request)
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "StartJobRun")

    monkeypatch.setattr(emr, "start_job_run", refuse)
    refused = _tick(context, calls)
    assert {(d["action"], d["reason"]) for d in refused} == {("skipped", "start-failed: ThrottlingException")}
    # when the next tick comes before the claims expire, StartJobRun answering again
    monkeypatch.setattr(emr, "start_job_run", recorded)
    clock.advance(10_000)
    resumed = _tick(context, calls)
    # then the three resume in the run of the refused request: same token, configs and workers
    assert {d["action"] for d in resumed} == {"resumed"} and len({d["job_run_id"] for d in resumed}) == 1
    assert calls[1] == calls[0]
    assert calls[1][0]["clientToken"] == batch_token([(f"c{i}", 1) for i in range(3)])
    assert [c["S"] for c in _claim(table, "c1")["configs"]["L"]] == _configs(calls[0][0])


def test_runs_are_composed_by_role_in_order_up_to_the_limit_and_resumed_runs_as_recorded():
    from lambdas.trigger.connectors import Connector
    from lambdas.trigger.rules import Rotation
    from lambdas.trigger.runs import Ready
    from lambdas.trigger.state import RunClaim

    def ready(name: str, role: str, batch: str | None = None) -> Ready:
        connector = Connector(name, (name,), f"s3://x/{name}.json", Rotation(1), role)
        return Ready(connector, RunClaim(1, 0, 0, 1, batch=batch), "started", "flush-size", None)

    members = [ready("a", "r1"), ready("b", "r2"), ready("c", "r1"), ready("d", "r1", "T"), ready("e", "r2", "T")]
    runs = [[r.connector.name for r in run] for run in compose(members, 1)]
    assert runs == [["d", "e"], ["a"], ["c"], ["b"]]
    assert run_arguments(["s3://x/a.json", "s3://x/b.json"]) == [
        "run",
        "--config",
        "s3://x/a.json",
        "--config",
        "s3://x/b.json",
    ]
