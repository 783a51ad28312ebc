"""The trigger handler against moto (in-process), fed AWS-shaped MSK events, on a fixed clock.

Given connectors with their own rotation settings, when batches, ticks and forced runs arrive, then a run starts
only when a file of some topic-partition would close, never twice at once, and not again right after a failure.
The connectors come from the index published in (mocked) S3, re-read after its TTL.
"""

from __future__ import annotations

import json
import shlex

import boto3
import pytest
from botocore.exceptions import ClientError

from lambdas.shared.connector_index import INDEX_TTL_MS, ConnectorIndexError
from lambdas.trigger import handler as trigger
from lambdas.trigger.errors import UnknownRequestError
from lambdas.trigger.sizing import UPKEEP
from tests.connector_index import publish_index
from tests.lambdas.conftest import EVENTS, T0, msk_event

ORDERS, CLICKS = "orders-s3-sink", "clicks-s3-sink"
ORDERS_ROLE, DEFAULT_ROLE = "arn:aws:iam::123456789012:role/orders-job", "arn:aws:iam::123456789012:role/job"
FLUSH_SIZE, SCHEDULE_MS, CLAIM_MS, BASE_MS, CAP_MS = 1_000, 600_000, 900_000, 60_000, 3_600_000
INDEX_URI = "s3://lake/_connectors/_index.json"
INFRA_PARAMETERS = "--conf spark.archives=s3://assets/env.tar.gz#environment"
CONNECTORS = [
    {
        "name": ORDERS,
        "topics": ["orders", "payments"],
        "config_uri": "s3://lake/_connectors/orders-s3-sink.json",
        "role_arn": ORDERS_ROLE,
        "rotation": {
            "flush.size": FLUSH_SIZE,
            "rotate.schedule.interval.ms": SCHEDULE_MS,
            "rotate.interval.ms": -1,
            "timestamp.extractor": "wallclock",
            "timezone": "UTC",
        },
        "sizing": {"tasks.max": 8, "format.class": "json", "sink.run.max.records.per.partition": 10_000_000},
    },
    {
        "name": CLICKS,
        "topics": ["clicks"],
        "config_uri": "s3://lake/_connectors/clicks-s3-sink.json",
        "tables": False,
        "rotation": {
            "flush.size": FLUSH_SIZE,
            "rotate.schedule.interval.ms": -1,
            "rotate.interval.ms": 60_000,
            "timestamp.extractor": "record",
            "timezone": "UTC",
        },
    },
]


@pytest.fixture
def environment(table, monkeypatch) -> dict[str, str]:
    """The trigger's variables, as the stack sets them (an EMR application moto knows), the index not published."""
    emr = boto3.client("emr-serverless")
    application = emr.create_application(name="sink-test", releaseLabel="emr-7.12.0", type="SPARK")["applicationId"]
    env = {
        "TABLE_NAME": table,
        "APPLICATION_ID": application,
        "JOB_ROLE_ARN": DEFAULT_ROLE,
        "ENTRY_POINT": "s3://assets/entrypoint.py",
        "SPARK_PARAMETERS": INFRA_PARAMETERS,
        "JOB_TIMEOUT_MINUTES": "60",
        "MAX_CPU": "16 vCPU",
        "MAX_MEMORY": "64 GB",
        "MAX_DISK": "200 GB",
        "RUN_CLAIM_MS": str(CLAIM_MS),
        "BACKOFF_BASE_MS": str(BASE_MS),
        "BACKOFF_CAP_MS": str(CAP_MS),
        "POWERTOOLS_SERVICE_NAME": "sink-trigger",
        "CONNECTORS_URI": INDEX_URI,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def _serve(environment: dict[str, str], clock, monkeypatch) -> None:
    """The handler's service, built as on a cold start, on the test's clock."""
    service = trigger.build_service(environment, clock)
    monkeypatch.setattr(trigger, "_service", lambda: service)


@pytest.fixture
def app_id(environment, monkeypatch, clock) -> str:
    publish_index(INDEX_URI, CONNECTORS)
    _serve(environment, clock, monkeypatch)
    return environment["APPLICATION_ID"]


# --- given: what the engine and EMR did ----------------------------------------------------------------------------


def _commit(table: str, connector: str, offsets: dict[tuple[str, int], int], at_ms: int) -> None:
    for (topic, partition), next_offset in offsets.items():
        boto3.client("dynamodb").put_item(
            TableName=table,
            Item={
                "pk": {"S": connector},
                "sk": {"S": f"OFFSET#{topic}#{partition}"},
                "topic": {"S": topic},
                "partition": {"N": str(partition)},
                "next_offset": {"N": str(next_offset)},
                "epoch": {"N": "1"},
                "committed_at_ms": {"N": str(at_ms)},
            },
        )


def _lease(table: str, connector: str) -> dict | None:
    key = {"pk": {"S": connector}, "sk": {"S": "LEASE"}}
    return boto3.client("dynamodb").get_item(TableName=table, Key=key).get("Item")


def _hold_lease(table: str, connector: str, expires_at_ms: int) -> None:
    """A run took the lease (the epoch moves on) and holds it until `expires_at_ms` (0: released)."""
    lease = _lease(table, connector)
    epoch = int(lease["epoch"]["N"]) + 1 if lease else 1
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


def _set_run_state(app_id: str, job_run_id: str, state: str) -> None:
    """moto's runs go straight to SUCCESS; set the state a real run has while it starts or after it ends."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.emrserverless.models import emrserverless_backends

    backend = emrserverless_backends[DEFAULT_ACCOUNT_ID]["eu-west-1"]
    next(r for r in backend.job_runs[app_id] if r.id == job_run_id).state = state


def _runs(app_id: str) -> list[dict]:
    emr = boto3.client("emr-serverless")
    try:
        return sorted(emr.list_job_runs(applicationId=app_id)["jobRuns"], key=lambda r: r["name"])
    except emr.exceptions.ResourceNotFoundException:  # moto knows an application's runs from its first run on
        return []


def _run_detail(app_id: str, job_run_id: str) -> dict:
    return boto3.client("emr-serverless").get_job_run(applicationId=app_id, jobRunId=job_run_id)["jobRun"]


# --- when: events -------------------------------------------------------------------------------------------------


def _records(topic: str, partitions, start: int, count: int, ts: int) -> list[tuple]:
    return [(topic, p, offset, ts) for p in partitions for offset in range(start, start + count)]


def _batch(context, *records: list[tuple]) -> list[dict]:
    return trigger.handler(msk_event([r for group in records for r in group]), context)["decisions"]


def _tick(context) -> list[dict]:
    return trigger.handler({"action": "idle-flush"}, context)["decisions"]


def _decision(decisions: list[dict], connector: str = ORDERS) -> tuple:
    (found,) = [d for d in decisions if d["connector"] == connector]
    return found["action"], found["reason"]


@pytest.fixture
def committed(table) -> None:
    """Every topic committed at offset 0, one minute before T0 (the orders connector's next boundary: 10:10)."""
    _commit(table, ORDERS, {**{("orders", p): 0 for p in range(24)}, ("payments", 0): 0}, T0 - 60_000)
    _commit(table, CLICKS, {("clicks", 0): 0, ("clicks", 1): 0}, T0 - 60_000)


# --- then ---------------------------------------------------------------------------------------------------------


def test_the_aws_sample_event_of_an_unknown_topic_starts_nothing(app_id, context):
    sample = json.loads((EVENTS / "msk_event.json").read_text())
    assert trigger.handler(sample, context) == {"decisions": []}
    assert _runs(app_id) == []


def test_a_trickle_starts_nothing_until_one_partition_passes_flush_size_then_exactly_one_run(
    app_id, table, context, clock, committed
):
    # 24 partitions x 900 = 21,600 pending: far past the old total threshold, but no partition fills a file
    for start, count in ((0, 600), (600, 300)):
        clock.advance(30_000)
        assert _decision(_batch(context, _records("orders", range(24), start, count, clock()))) == (
            "skipped",
            "nothing-closes",
        )
    assert _runs(app_id) == []
    clock.advance(30_000)
    (decision,) = _batch(context, _records("orders", [7], 900, 100, clock()))
    assert (decision["action"], decision["reason"], decision["where"]) == ("started", "flush-size", "orders-7")
    # markers are written when they say something new (rules.worth_saving): the first 600 of each partition, then
    # partition 7's crossing; the gauge lags the 300 of the other 23 (less than a file each)
    assert decision["pending_records"] == 23 * 600 + 1_000
    _set_run_state(app_id, decision["job_run_id"], "PENDING")
    clock.advance(30_000)
    assert _decision(_batch(context, _records("orders", [8], 900, 200, clock()))) == ("skipped", "run-active")
    (run,) = _runs(app_id)
    detail = _run_detail(app_id, run["id"])
    assert detail["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "run",
        "--config",
        "s3://lake/_connectors/orders-s3-sink.json",
    ]
    assert detail["executionRole"] == ORDERS_ROLE


@pytest.mark.parametrize("noticed_by", ["tick", "batch"])
def test_a_scheduled_rotation_boundary_passed_starts_one_run(app_id, table, context, clock, committed, noticed_by):
    assert _decision(_batch(context, _records("payments", [0], 0, 5, clock()))) == ("skipped", "nothing-closes")
    clock.now_ms = T0 + 7 * 60_000 - 1  # 10:09:59.999, the boundary after the 10:02 commit is 10:10
    assert _decision(_tick(context)) == ("skipped", "nothing-closes")
    clock.advance(1)
    decisions = _tick(context) if noticed_by == "tick" else _batch(context, _records("payments", [0], 5, 1, clock()))
    assert _decision(decisions) == ("started", "scheduled-rotation")
    assert len(_runs(app_id)) == 1


def test_pending_records_spanning_rotate_interval_ms_start_one_run(app_id, table, context, clock, committed):
    first = T0 - 3_600_000  # record times, not the wall clock, count for the Record extractor
    assert _decision(
        _batch(context, _records("clicks", [0], 0, 10, first), _records("clicks", [1], 0, 10, first + 120_000)), CLICKS
    ) == ("skipped", "nothing-closes")
    assert _decision(_batch(context, _records("clicks", [0], 10, 1, first + 59_999)), CLICKS) == (
        "skipped",
        "nothing-closes",
    )
    (decision,) = _batch(context, _records("clicks", [0], 11, 1, first + 60_000))
    assert (decision["action"], decision["reason"], decision["where"]) == ("started", "record-interval", "clicks-0")
    (run,) = _runs(app_id)
    assert _run_detail(app_id, run["id"])["executionRole"] == DEFAULT_ROLE  # no role_arn in its entry


def test_a_topic_without_traffic_since_the_deploy_gets_its_first_run_from_the_tick(app_id, table, context, clock):
    decisions = _tick(context)
    assert _decision(decisions, ORDERS) == ("started", "first-run")
    assert _decision(decisions, CLICKS) == ("started", "first-run")
    # the runs pin every partition's start (nothing else was there): the next tick has nothing to do
    for connector, _run_id, tps in (
        (ORDERS, decisions[0]["job_run_id"], [("orders", 0), ("payments", 0)]),
        (CLICKS, decisions[1]["job_run_id"], [("clicks", 0)]),
    ):
        _hold_lease(table, connector, expires_at_ms=0)
        _commit(table, connector, {tp: 0 for tp in tps}, clock() + 60_000)
    clock.advance(300_000)
    assert [d["reason"] for d in _tick(context)] == ["nothing-closes", "nothing-closes"]
    assert len(_runs(app_id)) == 2


# How each attempt ends (EMR state, lease taken, offsets committed) and the wait before the next (base 60 s).
ENDINGS = [
    ("FAILED", False, False, 60_000),  # 1st failure: wait base
    ("CANCELLED", False, False, 120_000),  # 2nd: twice as long
    ("SUCCESS", False, False, 240_000),  # a run that never took the lease failed too
    ("SUCCESS", True, False, 480_000),  # took the lease but committed nothing: as bad
    ("SUCCESS", True, True, 0),  # a success resets the count ...
    ("FAILED", False, False, 60_000),  # ... so the next failure waits base again
]


def test_a_run_failing_repeatedly_waits_longer_each_time_and_a_success_resets_it(
    app_id, table, context, clock, committed
):
    (first,) = _batch(context, _records("orders", [0], 0, FLUSH_SIZE, clock()))
    run_id, offset = first["job_run_id"], FLUSH_SIZE
    for state, took_lease, committed_offsets, wait in ENDINGS:
        _set_run_state(app_id, run_id, state)
        if took_lease:
            _hold_lease(table, ORDERS, expires_at_ms=0)
        if committed_offsets:
            _commit(table, ORDERS, {("orders", 0): offset}, clock())
        clock.advance(10_000)
        decision = _batch(context, _records("orders", [0], offset, FLUSH_SIZE, clock()))[0]
        offset += FLUSH_SIZE
        if wait:
            assert (decision["action"], decision["reason"], decision["retry_at_ms"]) == (
                "skipped",
                "backoff",
                clock() + wait,
            )
            clock.advance(wait - 1)
            assert _decision(_tick(context)) == ("skipped", "backoff")
            clock.advance(1)
            decision = _tick(context)[0]
        assert decision["action"] == "started"
        run_id = decision["job_run_id"]
    assert len(_runs(app_id)) == len(ENDINGS) + 1


@pytest.mark.parametrize("state", ["QUEUED", "PENDING", "SCHEDULED", "SUBMITTED", "RUNNING"])
def test_a_claim_expiring_while_its_run_is_still_starting_starts_no_duplicate(
    app_id, table, context, clock, committed, state
):
    (first,) = _batch(context, _records("orders", [0], 0, FLUSH_SIZE, clock()))
    _set_run_state(app_id, first["job_run_id"], state)
    clock.advance(CLAIM_MS + 1)
    (again,) = _batch(context, _records("orders", [0], FLUSH_SIZE, 10, clock()))
    reason = "run-queued" if state == "QUEUED" else "run-active"
    assert (again["action"], again["reason"], again["job_run_id"]) == ("skipped", reason, first["job_run_id"])
    assert len(_runs(app_id)) == 1


def test_a_run_queued_by_emr_is_reported_as_queued(app_id, table, context, clock, committed, capsys, caplog):
    # given a run EMR Serverless holds QUEUED: the application's MaxConcurrentRuns is taken ("Job run states")
    (first,) = _batch(context, _records("orders", [0], 0, FLUSH_SIZE, clock()))
    _set_run_state(app_id, first["job_run_id"], "QUEUED")
    capsys.readouterr()
    # when the next tick decides for the connector
    (again,) = [d for d in _tick(context) if d["connector"] == ORDERS]
    # then it starts nothing, says the run is queued, and publishes QueuedJobRuns (the QueuedJobRuns alarm's metric,
    # Powertools' EMF on stdout) and a JOB_RUN_QUEUED log event naming the run
    assert (again["action"], again["reason"], again["job_run_id"]) == ("skipped", "run-queued", first["job_run_id"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    metrics = [line for line in lines if "_aws" in line]
    assert [(m["QueuedJobRuns"], m["service"]) for m in metrics if "QueuedJobRuns" in m] == [([1.0], "sink-trigger")]
    assert [(r.connector, r.job_run_id) for r in caplog.records if r.getMessage() == "JOB_RUN_QUEUED"] == [
        (ORDERS, first["job_run_id"])
    ]


def test_a_forced_run_starts_one_run_and_none_while_one_is_active(app_id, table, context, clock, committed):
    forced = {"action": "run", "connector": ORDERS}
    (decision,) = trigger.handler(forced, context)["decisions"]
    assert (decision["action"], decision["reason"], decision["pending_records"]) == ("started", "forced", 0)
    _set_run_state(app_id, decision["job_run_id"], "RUNNING")
    assert _decision(trigger.handler(forced, context)["decisions"]) == ("skipped", "run-active")
    _hold_lease(table, ORDERS, expires_at_ms=clock() + 60_000)
    assert _decision(trigger.handler(forced, context)["decisions"]) == ("skipped", "lease-held")
    assert len(_runs(app_id)) == 1


def test_a_forced_run_ignores_the_backoff(app_id, table, context, clock, committed):
    (first,) = trigger.handler({"action": "run", "connector": ORDERS}, context)["decisions"]
    _set_run_state(app_id, first["job_run_id"], "FAILED")
    clock.advance(1_000)
    assert _decision(_batch(context, _records("orders", [0], 0, FLUSH_SIZE, clock()))) == ("skipped", "backoff")
    assert _decision(trigger.handler({"action": "run", "connector": ORDERS}, context)["decisions"]) == (
        "started",
        "forced",
    )


@pytest.mark.parametrize("event", [{"action": "run", "connector": "nope"}, {"action": "flush"}, {}])
def test_an_unknown_request_is_refused_naming_it(app_id, context, event):
    with pytest.raises(UnknownRequestError, match="nope|'flush'|None"):
        trigger.handler(event, context)


@pytest.mark.parametrize("meanwhile", ["run starting", "run holds the lease", "run committed the batch"])
def test_the_same_msk_batch_delivered_twice_starts_no_second_job(app_id, table, context, clock, committed, meanwhile):
    event = msk_event(_records("orders", [3], 0, FLUSH_SIZE, clock()))
    (first,) = trigger.handler(event, context)["decisions"]
    assert first["action"] == "started"
    if meanwhile == "run starting":
        _set_run_state(app_id, first["job_run_id"], "PENDING")
    elif meanwhile == "run holds the lease":
        _hold_lease(table, ORDERS, expires_at_ms=clock() + 60_000)
    else:
        _hold_lease(table, ORDERS, expires_at_ms=0)
        _commit(table, ORDERS, {("orders", 3): FLUSH_SIZE}, clock() + 1)
    clock.advance(2_000)
    (again,) = trigger.handler(event, context)["decisions"]
    assert again["action"] == "skipped"
    assert len(_runs(app_id)) == 1


def test_a_small_batch_is_remembered_per_partition(app_id, table, context, clock, committed):
    _batch(context, _records("orders", [2], 0, 10, clock()))
    marker = boto3.client("dynamodb").get_item(
        TableName=table, Key={"pk": {"S": ORDERS}, "sk": {"S": "TRIGGER#orders#2"}}
    )["Item"]
    assert {k: v["N"] for k, v in marker.items() if "N" in v} == {
        "next_offset": "10",
        "first_offset": "0",
        "first_ts_ms": str(clock()),
        "newest_ts_ms": str(clock()),
    }


def test_the_tick_reports_the_health_of_the_event_source_mappings(app_id, context, committed, capsys):
    _tick(context)  # moto's Lambda knows no mapping of this function: each of the 3 topics lacks one
    lines = capsys.readouterr().out.splitlines()
    metric = "UnhealthyEventSourceMappings"
    assert [json.loads(line)[metric] for line in lines if metric in line] == [[3.0]]
    _batch(context, _records("orders", [0], 0, 1, T0))
    assert "UnhealthyEventSourceMappings" not in capsys.readouterr().out  # batches do not check


def test_a_deploy_that_changes_the_index_is_seen_after_its_ttl_without_a_new_container(app_id, context, clock):
    assert sorted(d["connector"] for d in _tick(context)) == [CLICKS, ORDERS]
    views = {
        **CONNECTORS[1],
        "name": "views-s3-sink",
        "topics": ["views"],
        "config_uri": "s3://lake/_connectors/views-s3-sink.json",
    }
    publish_index(INDEX_URI, [CONNECTORS[0], views])  # a deploy adds views and removes clicks
    clock.advance(INDEX_TTL_MS - 1)
    assert sorted(d["connector"] for d in _tick(context)) == [CLICKS, ORDERS]  # the container's copy
    clock.advance(1)
    decisions = _tick(context)
    assert sorted(d["connector"] for d in decisions) == [ORDERS, "views-s3-sink"]
    assert _decision(decisions, "views-s3-sink") == ("started", "first-run")
    with pytest.raises(UnknownRequestError, match=CLICKS):
        trigger.handler({"action": "run", "connector": CLICKS}, context)


@pytest.mark.parametrize(
    "body, error",
    [
        (None, "does not exist"),
        (b"{not json", "is not valid JSON"),
        (json.dumps({"connectors": CONNECTORS}).encode(), "is not a JSON list of connector entries"),
        (json.dumps([{**CONNECTORS[0], "rotation": {"flush.size": 0}}]).encode(), f"{ORDERS}.*rotation"),
        (json.dumps([{k: v for k, v in CONNECTORS[1].items() if k != "topics"}]).encode(), f"{CLICKS}.*lacks topics"),
    ],
)
def test_a_missing_or_malformed_index_fails_every_event_naming_its_uri(
    environment, monkeypatch, clock, context, body, error
):
    if body is not None:
        publish_index(INDEX_URI, [])
        bucket, _, key = INDEX_URI.removeprefix("s3://").partition("/")
        boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=body)
    _serve(environment, clock, monkeypatch)
    for event in ({"action": "idle-flush"}, {"action": "run", "connector": ORDERS}, msk_event([("orders", 0, 0, T0)])):
        with pytest.raises(ConnectorIndexError, match=f"connector index {INDEX_URI}: .*{error}"):
            trigger.handler(event, context)
    publish_index(INDEX_URI, CONNECTORS)  # published (the admin's apply): the next event reads it
    assert sorted(d["connector"] for d in _tick(context)) == [CLICKS, ORDERS]


def test_a_maintenance_tick_starts_the_connectors_iceberg_maintain_run_once_per_tick(app_id, table, context, clock):
    # given a run of the connector holding its lease (maintenance commits safely beside it)
    _hold_lease(table, ORDERS, expires_at_ms=clock() + 600_000)
    tick = {"action": "maintain", "connector": ORDERS, "time": "2026-03-02T02:30:00Z"}
    # when its schedule's tick arrives, twice (EventBridge delivers at least once)
    first = trigger.handler(tick, context)["maintenance"]
    again = trigger.handler(tick, context)["maintenance"]
    # then one job run of `iceberg maintain` starts, with the connector's role and config, whatever the lease
    assert (first["action"], first["reason"]) == ("started", "maintenance")
    detail = _run_detail(app_id, first["job_run_id"])
    assert detail["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "iceberg",
        "maintain",
        "--config",
        "s3://lake/_connectors/orders-s3-sink.json",
    ]
    assert detail["executionRole"] == ORDERS_ROLE
    assert detail["tags"] == {"connector": ORDERS, "action": "maintain"}
    assert (
        detail["jobDriver"]["sparkSubmit"]["sparkSubmitParameters"] == f"{INFRA_PARAMETERS} {UPKEEP.spark_parameters()}"
    )  # the driver does the upkeep: small fixed workers
    # and the retried tick carries the same client token (moto does not dedupe by it; EMR Serverless does)
    tokens = {r.client_token for r in _moto_runs(app_id)}
    assert len(tokens) == 1 and again["job_run_id"]
    # and the next tick is another run
    trigger.handler({**tick, "time": "2026-03-03T02:30:00Z"}, context)
    assert len({r.client_token for r in _moto_runs(app_id)}) == 2


def test_a_maintenance_tick_of_an_unknown_connector_names_it(app_id, context):
    with pytest.raises(UnknownRequestError, match="connector 'gone' is not deployed"):
        trigger.handler({"action": "maintain", "connector": "gone", "time": "2026-03-02T02:30:00Z"}, context)


def test_a_maintenance_request_for_a_connector_of_s3_objects_is_refused_naming_it(app_id, context):
    # given a connector whose index entry says it writes no tables (ORDERS' entry, from an index written before
    # the flag, is assumed to)
    with pytest.raises(UnknownRequestError, match=f"connector '{CLICKS}' writes S3 objects, not Iceberg tables"):
        trigger.handler({"action": "maintain", "connector": CLICKS}, context)
    # then no job run started
    assert _moto_runs(app_id) == []


def _moto_runs(app_id: str) -> list:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.emrserverless.models import emrserverless_backends

    return emrserverless_backends[DEFAULT_ACCOUNT_ID]["eu-west-1"].job_runs.get(app_id, [])


@pytest.mark.parametrize(
    "connector, config_uri, role",
    [
        (ORDERS, "s3://lake/_connectors/orders-s3-sink.json", ORDERS_ROLE),
        (CLICKS, "s3://lake/_connectors/clicks-s3-sink.json", DEFAULT_ROLE),  # objects, not tables: doctor applies too
    ],
)
def test_a_doctor_request_starts_a_doctor_run_of_the_connector_as_its_job_role(
    app_id, table, context, clock, connector, config_uri, role
):
    # given a run of the connector holding its lease (the doctor only reads it)
    _hold_lease(table, connector, expires_at_ms=clock() + 600_000)
    # when the deploy guide's request arrives
    answer = trigger.handler({"action": "doctor", "connector": connector}, context)["doctor"]
    # then one job run of `sink-engine doctor` starts with the connector's config, as its job role
    assert (answer["action"], answer["reason"]) == ("started", "doctor")
    detail = _run_detail(app_id, answer["job_run_id"])
    assert detail["jobDriver"]["sparkSubmit"]["entryPointArguments"] == ["doctor", "--config", config_uri]
    assert detail["executionRole"] == role
    assert detail["tags"] == {"connector": connector, "action": "doctor"}
    assert detail["name"] == f"{connector}-doctor"
    # and no run claim was taken: the connector's runs go on as before
    assert "Item" not in boto3.client("dynamodb").get_item(
        TableName=table, Key={"pk": {"S": connector}, "sk": {"S": "RUN"}}
    )


def test_a_doctor_request_for_an_unknown_connector_names_it(app_id, context):
    with pytest.raises(UnknownRequestError, match="connector 'gone' is not deployed"):
        trigger.handler({"action": "doctor", "connector": "gone"}, context)
    assert _moto_runs(app_id) == []


# --- run sizes ----------------------------------------------------------------------------------------------------


def _spark_confs(app_id: str, job_run_id: str) -> dict[str, str]:
    parameters = _run_detail(app_id, job_run_id)["jobDriver"]["sparkSubmit"]["sparkSubmitParameters"]
    assert parameters.startswith(f"{INFRA_PARAMETERS} --conf ")  # the infrastructure's first, the run's after
    words = shlex.split(parameters)
    return dict(w.split("=", 1) for w in words[1::2])


SMALLEST = {
    "spark.driver.cores": "1",
    "spark.driver.memory": "1g",
    "spark.driver.memoryOverhead": "1g",
    "spark.executor.cores": "1",
    "spark.executor.memory": "1g",
    "spark.executor.memoryOverhead": "1g",
    "spark.executor.instances": "1",
    "spark.dynamicAllocation.enabled": "false",
}


def test_a_run_of_one_file_gets_the_smallest_workers(app_id, table, context, clock, committed):
    # given one partition a file past its commit (1,000 offsets)
    (decision,) = _batch(context, _records("orders", [5], 0, FLUSH_SIZE, clock()))
    # then its run asks for a 1-vCPU driver and one 1-vCPU executor, dynamic allocation off; the driver has 4 GB
    # (3 GB beside its heap), as the entry is assumed to write Iceberg tables (it predates the `tables` flag)
    assert decision["action"] == "started"
    confs = _spark_confs(app_id, decision["job_run_id"])
    assert {k: confs[k] for k in SMALLEST} == {**SMALLEST, "spark.driver.memoryOverhead": "3g"}
    assert confs["spark.archives"] == "s3://assets/env.tar.gz#environment"


def test_a_run_far_behind_gets_more_and_larger_executors_within_its_tasks_and_the_capacity(
    app_id, table, context, clock, committed
):
    # given the event source delivered records 50 million offsets past every orders partition's commit (the
    # trigger counts offsets): 24 partitions, each read up to 10 million per run (its sizing), tasks.max 8
    (decision,) = _batch(context, [("orders", p, 50_000_000, clock()) for p in range(24)])
    assert (decision["action"], decision["pending_records"]) == ("started", 24 * 50_000_001)
    # then 240 million JSON records (800 vCPU-s) run on two 4-vCPU executors of 8 GB beside the smallest driver
    confs = _spark_confs(app_id, decision["job_run_id"])
    assert {
        k: confs[k]
        for k in (
            "spark.executor.instances",
            "spark.executor.cores",
            "spark.executor.memory",
            "spark.executor.memoryOverhead",
            "spark.driver.cores",
        )
    } == {
        "spark.executor.instances": "2",
        "spark.executor.cores": "4",
        "spark.executor.memory": "2g",
        "spark.executor.memoryOverhead": "6g",
        "spark.driver.cores": "1",
    }


def test_emr_max_executors_per_run_limits_the_executors_of_a_run(
    app_id, table, context, clock, committed, environment, monkeypatch
):
    # given the stack's MAX_EXECUTORS_PER_RUN (emr.max_executors_per_run) of 1, and the run far behind above
    _serve({**environment, "MAX_EXECUTORS_PER_RUN": "1"}, clock, monkeypatch)
    (decision,) = _batch(context, [("orders", p, 50_000_000, clock()) for p in range(24)])
    # then it gets one executor, the largest, not two: with dynamic allocation off, spark.executor.instances is
    # what a run gets (EMR Serverless User Guide, "Spark job properties"), so the limit is on the count
    confs = _spark_confs(app_id, decision["job_run_id"])
    assert {
        k: confs[k] for k in ("spark.executor.instances", "spark.executor.cores", "spark.dynamicAllocation.enabled")
    } == {"spark.executor.instances": "1", "spark.executor.cores": "4", "spark.dynamicAllocation.enabled": "false"}
    assert "spark.dynamicAllocation.maxExecutors" not in confs


def test_a_connector_indexed_without_sizing_runs_one_task_on_one_small_executor(
    app_id, table, context, clock, committed
):
    # given the clicks entry (S3 objects) carries no sizing (an index published before it): the engine's tasks.max 1
    first = T0 - 3_600_000
    (decision,) = _batch(
        context,
        [("clicks", p, 40_000_000, first + 60_000 * p) for p in (0, 1)],
        [("clicks", 0, 40_000_001, first + 60_000)],
    )
    assert (decision["connector"], decision["action"]) == (CLICKS, "started")
    # then, whatever is pending, one 1-vCPU executor and the smallest driver
    confs = _spark_confs(app_id, decision["job_run_id"])
    assert {k: confs[k] for k in SMALLEST} == SMALLEST


def test_a_resumed_start_repeats_the_sizes_of_its_claim(app_id, table, context, clock, committed, monkeypatch):
    # given a run claimed for one file's worth whose StartJobRun was refused (the claim stays, with its sizes)
    emr = trigger._service()._starter._emr
    real, refusals = emr.start_job_run, []

    def refuse_once(**request):
        if not refusals:
            refusals.append(request)
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "StartJobRun")
        return real(**request)

    monkeypatch.setattr(emr, "start_job_run", refuse_once)
    (first,) = _batch(context, _records("orders", [5], 0, FLUSH_SIZE, clock()))
    assert (first["action"], first["reason"]) == ("skipped", "start-failed: ThrottlingException")
    # when a batch far behind arrives before the claim expires
    clock.advance(10_000)
    (resumed,) = _batch(context, [("orders", p, 50_000_000, clock()) for p in range(24)])
    # then the claim's run starts with the same request as the refused one: the sizes of one file's worth
    assert resumed["action"] == "resumed"
    confs = _spark_confs(app_id, resumed["job_run_id"])
    assert {k: confs[k] for k in SMALLEST} == {**SMALLEST, "spark.driver.memoryOverhead": "3g"}
    assert refusals[0]["jobDriver"] == _run_detail(app_id, resumed["job_run_id"])["jobDriver"]
