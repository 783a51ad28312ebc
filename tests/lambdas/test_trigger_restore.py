"""A restore request to the trigger (moto in-process): checked against the connector's index entry, naming the
field at fault before any job run starts; a good one starts one EMR job run of `sink-engine restore`, as the
connector's job role, on the fixed small workers, with a token that makes a retried invocation start no second; a
restore that ends before it is done (EMR's job timeout) is started again by the idle-flush tick while it makes
progress."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError

from lambdas.trigger import handler as trigger
from lambdas.trigger.errors import UnknownRequestError
from lambdas.trigger.restore import RestoreRequestError
from lambdas.trigger.sizing import UPKEEP
from tests.connector_index import publish_index
from tests.lambdas.test_trigger_handler import (
    CONNECTORS,
    INDEX_URI,
    INFRA_PARAMETERS,
    ORDERS,
    ORDERS_ROLE,
    _moto_runs,
    _run_detail,
    _serve,
    _set_run_state,
    environment,  # noqa: F401 (fixture)
)

NO_RESTORE = "clicks-s3-sink"
CONFIG_URI = "s3://lake/_connectors/orders-s3-sink.json"
INDEX = [{**CONNECTORS[0], "restore_targets": ["orders.restored*", "payments-copy"]}, CONNECTORS[1]]


@pytest.fixture
def app_id(environment, monkeypatch, clock) -> str:
    publish_index(INDEX_URI, INDEX)
    _serve(environment, clock, monkeypatch)
    return environment["APPLICATION_ID"]


def _restore(context, **fields) -> dict:
    return trigger.handler({"action": "restore", "connector": ORDERS, **fields}, context)["restore"]


@pytest.mark.parametrize(
    "fields, arguments",
    [
        ({"topic": "orders", "target_topic": "orders.restored"}, []),
        (
            {
                "topic": "payments",
                "target_topic": "payments-copy",
                "partitions": [5, 0, 3],
                "from_offset": 10,
                "to_offset": 99,
            },
            ["--partitions", "0,3,5", "--from-offset", "10", "--to-offset", "99"],
        ),
        (
            {
                "topic": "orders",
                "target_topic": "orders.restored.2026-11-25",
                "from_time": "2026-11-25T10:00:00Z",
                "to_time": 1795604400000,
            },
            ["--from-time", "2026-11-25T10:00:00Z", "--to-time", "1795604400000"],
        ),
        (
            {"topic": "orders", "target_topic": "orders.restored", "binary_headers": ["trace", "span", "trace"]},
            ["--binary-headers", "span,trace"],
        ),
    ],
)
def test_a_restore_request_starts_a_restore_run_as_the_connectors_job_role(app_id, table, context, fields, arguments):
    # when a restore of one of the connector's topics into a target its settings allow is requested
    answer = _restore(context, **fields)
    # then one job run of `sink-engine restore` starts with the connector's config and the request's range
    assert (answer["action"], answer["reason"]) == ("started", "restore")
    detail = _run_detail(app_id, answer["job_run_id"])
    assert detail["jobDriver"]["sparkSubmit"]["entryPointArguments"] == [
        "restore",
        "--config",
        CONFIG_URI,
        "--topic",
        fields["topic"],
        "--target-topic",
        fields["target_topic"],
        *arguments,
    ]
    assert detail["executionRole"] == ORDERS_ROLE
    assert detail["tags"] == {"connector": ORDERS, "action": "restore", "target_topic": fields["target_topic"]}
    assert detail["name"] == f"{ORDERS}-restore"
    assert detail["jobDriver"]["sparkSubmit"]["sparkSubmitParameters"] == (
        f"{INFRA_PARAMETERS} {UPKEEP.spark_parameters()}"
    )  # the fixed small workers of table upkeep and the doctor
    # and no run claim was taken: the connector's runs go on as before
    assert "Item" not in boto3.client("dynamodb").get_item(
        TableName=table, Key={"pk": {"S": ORDERS}, "sk": {"S": "RUN"}}
    )


def test_the_same_request_retried_carries_one_token_and_another_request_another(app_id, context, clock):
    """EMR starts one run per client token (moto starts one per call: the tokens are compared)."""
    request = {"topic": "orders", "target_topic": "orders.restored", "time": "2026-11-25T16:00:00Z"}
    _restore(context, **request)
    _restore(context, **request)  # a retried invocation
    _restore(context, **{**request, "time": "2026-11-25T17:00:00Z"})  # the same restore asked again later
    _restore(context, **{**request, "partitions": [0]})  # another restore
    _restore(context, topic="orders", target_topic="orders.restored")  # without a time: the clock's
    clock.advance(1)
    _restore(context, topic="orders", target_topic="orders.restored")
    tokens = [r.client_token for r in _moto_runs(app_id)]
    assert tokens[0] == tokens[1] and len(set(tokens)) == 5


@pytest.mark.parametrize(
    "fields, field, message",
    [
        ({"target_topic": "orders.restored"}, "topic", "is required"),
        ({"topic": "clicks", "target_topic": "orders.restored"}, "topic", "'clicks' is not a topic of connector"),
        ({"topic": "orders"}, "target_topic", "is required"),
        ({"topic": "orders", "target_topic": "orders"}, "target_topic", "outside connector 'orders-s3-sink'"),
        ({"topic": "orders", "target_topic": "payments-copy2"}, "target_topic", "outside connector"),
        ({"topic": "orders", "target_topic": "orders.restored/x"}, "target_topic", "not a Kafka topic name"),
        ({"topic": "orders", "target_topic": "orders.restored", "partitions": []}, "partitions", "non-empty list"),
        ({"topic": "orders", "target_topic": "orders.restored", "partitions": [0, -1]}, "partitions", "non-empty list"),
        ({"topic": "orders", "target_topic": "orders.restored", "partitions": "0,1"}, "partitions", "non-empty list"),
        ({"topic": "orders", "target_topic": "orders.restored", "partitions": [1, 1]}, "partitions", "twice"),
        ({"topic": "orders", "target_topic": "orders.restored", "from_offset": -1}, "from_offset", "not an offset"),
        ({"topic": "orders", "target_topic": "orders.restored", "to_offset": "9"}, "to_offset", "not an offset"),
        (
            {"topic": "orders", "target_topic": "orders.restored", "from_offset": 10, "to_offset": 9},
            "to_offset",
            "before from_offset 10",
        ),
        (
            {"topic": "orders", "target_topic": "orders.restored", "from_time": "2026-11-25T10:00:00"},
            "from_time",
            "with its zone",
        ),
        ({"topic": "orders", "target_topic": "orders.restored", "to_time": "yesterday"}, "to_time", "not a time"),
        (
            {
                "topic": "orders",
                "target_topic": "orders.restored",
                "from_time": "2026-11-25T11:00:00+01:00",
                "to_time": "2026-11-25T09:59:59Z",
            },
            "to_time",
            "before from_time",
        ),
        ({"topic": "orders", "target_topic": "orders.restored", "from_ofset": 1}, "from_ofset", "not a field"),
        (
            {"topic": "orders", "target_topic": "orders.restored", "binary_headers": ["a,b"]},
            "binary_headers",
            "header names",
        ),
        (
            {"topic": "orders", "target_topic": "orders.restored", "binary_headers": "trace"},
            "binary_headers",
            "header names",
        ),
    ],
)
def test_a_malformed_request_is_refused_naming_its_field_before_any_run(app_id, context, fields, field, message):
    with pytest.raises(RestoreRequestError, match=f"restore request, {field}: .*{message}"):
        _restore(context, **fields)
    assert _moto_runs(app_id) == []


def test_a_connector_without_restore_targets_is_refused_naming_the_setting(app_id, context):
    with pytest.raises(RestoreRequestError, match=f"no restore.connectors.{NO_RESTORE}.target_topics"):
        trigger.handler(
            {"action": "restore", "connector": NO_RESTORE, "topic": "clicks", "target_topic": "clicks.restored"},
            context,
        )
    assert _moto_runs(app_id) == []


def test_a_restore_for_an_unknown_connector_names_it(app_id, context):
    with pytest.raises(UnknownRequestError, match="connector 'gone' is not deployed"):
        trigger.handler(
            {"action": "restore", "connector": "gone", "topic": "orders", "target_topic": "orders.restored"}, context
        )
    assert _moto_runs(app_id) == []


# --- a restore longer than the job timeout -------------------------------------------------------------------------


def _checkpoint(table: str, target: str, topic: str, recorded_at_ms: int) -> None:
    """The restore's `RESTORED#` checkpoint as the engine records it at a confirm (sink_engine/restore/lease.py)."""
    boto3.client("dynamodb").put_item(
        TableName=table,
        Item={
            "pk": {"S": f"restore#{target}"},
            "sk": {"S": f"RESTORED#{topic}"},
            "epoch": {"N": "1"},
            "recorded_at_ms": {"N": str(recorded_at_ms)},
            "scan_from": {"M": {"0": {"N": "0"}}},
            "present": {"M": {"0": {"S": f"0-{recorded_at_ms}"}}},
        },
    )


def _restore_runs(app_id: str) -> list:
    """moto's restore runs (the ticks also start the connectors' first data runs)."""
    return [r for r in _moto_runs(app_id) if r.tags.get("action") == "restore"]


def _tick_restores(context) -> list[dict]:
    return trigger.handler({"action": "idle-flush"}, context)["restores"]


def test_a_restore_the_job_timeout_cancelled_with_progress_is_started_again_until_done(app_id, table, context):
    # given a restore under way, whose target already held a checkpoint of an earlier restore
    _checkpoint(table, "orders.restored", "orders", 1_000)
    first = _restore(context, topic="orders", target_topic="orders.restored", partitions=[0], time="t1")
    _set_run_state(app_id, first["job_run_id"], "RUNNING")  # moto's runs are SUCCESS at once
    assert [r["action"] for r in _tick_restores(context)] == ["waiting"]
    # when EMR cancels it at the job timeout (CANCELLED, "Job run states") after it confirmed more records
    _checkpoint(table, "orders.restored", "orders", 2_000)
    _set_run_state(app_id, first["job_run_id"], "CANCELLED")
    (resumed,) = _tick_restores(context)
    # then the tick starts the same request again (its own client token), and only once
    assert (resumed["action"], resumed["attempt"], resumed["ended_job_run_id"]) == ("resumed", 1, first["job_run_id"])
    runs = {r.id: r for r in _moto_runs(app_id)}
    second = runs[resumed["job_run_id"]]
    assert second.job_driver == runs[first["job_run_id"]].job_driver
    assert second.client_token != runs[first["job_run_id"]].client_token
    _set_run_state(app_id, second.id, "RUNNING")
    assert [r["action"] for r in _tick_restores(context)] == ["waiting"] and len(_restore_runs(app_id)) == 2
    # and once that attempt succeeds, the restore is done: nothing more starts
    _set_run_state(app_id, second.id, "SUCCESS")
    assert [(r["action"], r["attempt"]) for r in _tick_restores(context)] == [("succeeded", 2)]
    assert _tick_restores(context) == [] and len(_restore_runs(app_id)) == 2


@pytest.mark.parametrize("ending", ["FAILED", "CANCELLED"])
def test_a_restore_that_ends_without_progress_is_not_started_again(app_id, table, context, ending):
    # given a restore whose run fails before it confirmed anything (a refused call, a target that does not exist)
    first = _restore(context, topic="orders", target_topic="orders.restored")
    _set_run_state(app_id, first["job_run_id"], ending)
    # then the tick stops following it: a rerun would fail the same way (the failure itself was notified)
    assert [(r["action"], r["job_run_id"]) for r in _tick_restores(context)] == [("stopped", None)]
    assert _tick_restores(context) == [] and len(_restore_runs(app_id)) == 1


def test_a_first_restore_that_recorded_its_first_checkpoint_then_timed_out_is_started_again(app_id, table, context):
    # the first restore into a target records its checkpoint when it begins, then at each confirm
    first = _restore(context, topic="orders", target_topic="orders.restored")
    _checkpoint(table, "orders.restored", "orders", 5_000)
    _set_run_state(app_id, first["job_run_id"], "CANCELLED")
    assert [r["action"] for r in _tick_restores(context)] == ["resumed"]


def test_a_rerun_emr_refuses_is_tried_again_at_the_next_tick(app_id, table, context, monkeypatch):
    first = _restore(context, topic="orders", target_topic="orders.restored")
    _checkpoint(table, "orders.restored", "orders", 5_000)
    _set_run_state(app_id, first["job_run_id"], "CANCELLED")
    emr = trigger._service()._starter._emr
    real = emr.start_job_run

    def refused(**request):
        raise ClientError(
            {"Error": {"Code": "ValidationException", "Message": "application is stopping"}}, "StartJobRun"
        )

    monkeypatch.setattr(emr, "start_job_run", refused)
    assert [r["action"] for r in _tick_restores(context)] == ["start-failed"]
    monkeypatch.setattr(emr, "start_job_run", real)
    assert [(r["action"], r["attempt"]) for r in _tick_restores(context)] == [("resumed", 1)]
