"""Lambda entry of the trigger: an MSK event source batch, the EventBridge idle-flush tick, a forced run, or the
scheduled table upkeep of an IcebergFormat connector.

Events: the MSK event (`eventSource` "aws:kafka", `records` grouped under "<topic>-<partition>"; only topic,
partition, offset and timestamp are read, never the base64 key or value); `{"action": "idle-flush"}`;
`{"action": "run", "connector": "<name>"}` (start a run now unless one is active, ignoring the rules and the
backoff); `{"action": "maintain", "connector": "<name>", "time": "<the schedule's event time>"}` (start an EMR
job run of `sink-engine iceberg maintain` for it; see runs.py); `{"action": "doctor", "connector": "<name>"}` (start
an EMR job run of `sink-engine doctor` for it, as its job role: its table lands in the job's logs);
`{"action": "restore", "connector": "<name>", "topic": "<its topic>", "target_topic": "<name>", "partitions": [0, 3]?,
"from_offset": N?, "to_offset": N?, "from_time": T?, "to_time": T?, "binary_headers": [...]?, "time": "<names the
request>"?}` (checked, then an EMR job run of `sink-engine restore` for it, as its job role; see restore.py). The
tick also reports the health of the function's MSK event source mappings (esm_health.py) and starts again the
restores that ended with progress but not done (restore_runs.py). A continuous connector's job is kept running
instead of bounded runs (continuous.py); the tick also cancels the STREAMING runs no continuous connector owns.
Environment: TABLE_NAME, CONNECTORS_URI (the connector index the admin publishes, read on first use and again
after `INDEX_TTL_MS`: see lambdas/shared/connector_index.py), APPLICATION_ID, JOB_ROLE_ARN (the role of entries
without their own role_arn), ENTRY_POINT, SPARK_PARAMETERS, JOB_TIMEOUT_MINUTES, MAX_CPU, MAX_MEMORY, MAX_DISK (the
application's maximum capacity, "16 vCPU", "64 GB", "200 GB": no run's workers exceed it), MAX_EXECUTORS_PER_RUN
(optional: the executors a data run may have), CONNECTORS_PER_RUN (optional: the connectors one job run serves at
most, default batches.CONNECTORS_PER_RUN), RUN_CLAIM_MS,
BACKOFF_BASE_MS, BACKOFF_CAP_MS, and Powertools' variables.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from lambdas.shared.connector_index import ConnectorIndex
from lambdas.trigger import esm_health
from lambdas.trigger.batches import CONNECTORS_PER_RUN, BatchStarter
from lambdas.trigger.connectors import connectors_from_entries
from lambdas.trigger.continuous import Cancelled, ContinuousRuns
from lambdas.trigger.errors import UnknownRequestError
from lambdas.trigger.restore_runs import RestoreRuns, Settled
from lambdas.trigger.runs import QUEUED_METRIC, Backoff, JobSpec, RunStarter
from lambdas.trigger.service import Decision, TriggerService
from lambdas.trigger.sizing import Capacity
from lambdas.trigger.state import TriggerState

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from sink_engine.aws_types import LambdaClient

logger = Logger()
tracer = Tracer()
KAFKA_SOURCES = ("aws:kafka", "SelfManagedKafka")


def _now_ms() -> int:
    return int(time.time() * 1000)


def build_service(env: Mapping[str, str], clock: Callable[[], int]) -> TriggerService:
    """The service of the environment's settings, with AWS clients of the current session; `clock` (ms) also ages
    the connector index."""
    dynamodb = boto3.client("dynamodb")
    state = TriggerState(dynamodb, env["TABLE_NAME"])
    capacity = Capacity.parse(env.get("MAX_CPU"), env.get("MAX_MEMORY"), env.get("MAX_DISK"))
    max_executors = env.get("MAX_EXECUTORS_PER_RUN")
    job = JobSpec(
        env["APPLICATION_ID"],
        env["ENTRY_POINT"],
        env["SPARK_PARAMETERS"],
        int(env["JOB_TIMEOUT_MINUTES"]),
        capacity,
        int(max_executors) if max_executors else None,
    )
    backoff = Backoff(int(env["BACKOFF_BASE_MS"]), int(env["BACKOFF_CAP_MS"]))
    claim_ms = int(env["RUN_CLAIM_MS"])
    emr = boto3.client("emr-serverless")
    starter = RunStarter(state, emr, job, claim_ms, backoff)
    batches = BatchStarter(state, emr, job, int(env.get("CONNECTORS_PER_RUN") or CONNECTORS_PER_RUN))
    default_role = env.get("JOB_ROLE_ARN")
    index = ConnectorIndex(
        env["CONNECTORS_URI"], boto3.client("s3"), lambda entries: connectors_from_entries(entries, default_role), clock
    )
    restores = RestoreRuns(dynamodb, env["TABLE_NAME"])
    continuous = ContinuousRuns(state, starter, job)
    return TriggerService(index.get, state, starter, clock, restores, continuous, batches)


@lru_cache(maxsize=1)
def _lambda_client() -> LambdaClient:
    return boto3.client("lambda")


@lru_cache(maxsize=1)
def _service() -> TriggerService:
    return build_service(os.environ, _now_ms)


def decide(event: dict) -> list[Decision]:
    if event.get("eventSource") in KAFKA_SOURCES:
        return _service().on_batch(event.get("records") or {})
    action = event.get("action")
    if action == "idle-flush":
        return _service().on_tick()
    if action == "run":
        return [_service().force(event.get("connector"))]
    raise UnknownRequestError(
        f"unknown trigger event: action {action!r} (expected an MSK event, "
        '{"action": "idle-flush"}, {"action": "run", "connector": "<name>"} or '
        '{"action": "maintain", "connector": "<name>"} or {"action": "doctor", "connector": '
        '"<name>"} or {"action": "restore", "connector": "<name>", "topic": ..., '
        '"target_topic": ...})'
    )


def maintain(event: dict) -> dict:
    connector = event.get("connector")
    outcome = _service().maintain(connector, event.get("time"))
    logger.info(
        "MAINTENANCE_RUN_STARTED",
        extra={"connector": connector, "job_run_id": outcome.job_run_id, "scheduled_at": event.get("time")},
    )
    return {
        "connector": connector,
        "action": outcome.action,
        "reason": outcome.reason,
        "job_run_id": outcome.job_run_id,
    }


def doctor(event: dict) -> dict:
    connector = event.get("connector")
    outcome = _service().doctor(connector, event.get("time"))
    logger.info("DOCTOR_RUN_STARTED", extra={"connector": connector, "job_run_id": outcome.job_run_id})
    return {
        "connector": connector,
        "action": outcome.action,
        "reason": outcome.reason,
        "job_run_id": outcome.job_run_id,
    }


def restore(event: dict) -> dict:
    request, outcome = _service().restore(event)
    logger.info(
        "RESTORE_RUN_STARTED",
        extra={
            "connector": event.get("connector"),
            "job_run_id": outcome.job_run_id,
            "topic": request.topic,
            "target_topic": request.target_topic,
        },
    )
    return {
        "connector": event.get("connector"),
        "action": outcome.action,
        "reason": outcome.reason,
        "job_run_id": outcome.job_run_id,
        "topic": request.topic,
        "target_topic": request.target_topic,
    }


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict, context: LambdaContext) -> dict:
    if event.get("action") == "maintain":
        return {"maintenance": maintain(event)}
    if event.get("action") == "doctor":
        return {"doctor": doctor(event)}
    if event.get("action") == "restore":
        return {"restore": restore(event)}
    decisions = decide(event)
    for decision in decisions:
        _report(decision)
    answer = {
        "decisions": [
            {
                "connector": d.connector,
                "action": d.outcome.action,
                "reason": d.outcome.reason,
                "where": d.where,
                "job_run_id": d.outcome.job_run_id,
                "retry_at_ms": d.outcome.retry_at_ms,
                "pending_records": d.pending.records,
            }
            for d in decisions
        ]
    }
    if event.get("action") == "idle-flush":  # the tick also checks the event sources that feed the batches
        esm_health.report(_lambda_client(), context.function_name, _service().topics, logger)
        answer["restores"] = [_report_restore(s) for s in _service().resume_restores()]
        answer["cancelled"] = [_report_cancelled(c) for c in _service().sweep_streaming()]
    return answer


def _report_cancelled(cancelled: Cancelled) -> dict:
    """CONTINUOUS_RUN_CANCELLED: a STREAMING run the tick cancelled, as no continuous connector owns it."""
    fields = {"connector": cancelled.connector, "job_run_id": cancelled.job_run_id, "reason": cancelled.reason}
    logger.info("CONTINUOUS_RUN_CANCELLED", extra=fields)
    return fields


def _report_restore(settled: Settled) -> dict:
    """RESTORE_RUN_RESUMED, _SUCCEEDED, _STOPPED or _START_FAILED (a restore still running is not logged)."""
    fields = {
        "connector": settled.connector,
        "action": settled.action,
        "topic": settled.run.request.topic,
        "target_topic": settled.run.request.target_topic,
        "attempt": settled.run.attempt,
        "ended_job_run_id": settled.run.job_run_id,
        "job_run_id": settled.job_run_id,
    }
    if settled.action != "waiting":
        logger.info(f"RESTORE_RUN_{settled.action.upper().replace('-', '_')}", extra=fields)
    return fields


def _report(decision: Decision) -> None:
    outcome = decision.outcome
    event = "JOB_RUN_STARTED" if outcome.action in ("started", "resumed") else "JOB_RUN_SKIPPED"
    if outcome.action == "cancelled":  # a continuous run stopped to start again (its config or the job changed)
        event = "CONTINUOUS_RUN_CANCELLED"
    if outcome.reason == "run-queued":
        event = "JOB_RUN_QUEUED"
        with single_metric(name=QUEUED_METRIC, unit=MetricUnit.Count, value=1):
            pass
    logger.info(
        event,
        extra={
            "connector": decision.connector,
            "action": outcome.action,
            "reason": outcome.reason,
            "where": decision.where,
            "job_run_id": outcome.job_run_id,
            "retry_at_ms": outcome.retry_at_ms,
            "pending_records": decision.pending.records,
        },
    )
    age_s = decision.pending.age_ms(decision.at_ms) / 1000
    for name, unit, value in (
        ("PendingRecords", MetricUnit.Count, decision.pending.records),
        ("OldestPendingAgeSeconds", MetricUnit.Seconds, age_s),
        ("JobRunsStarted", MetricUnit.Count, 1 if outcome.action == "started" else 0),
    ):
        with single_metric(name=name, unit=unit, value=value) as metric:
            metric.add_dimension(name="Connector", value=decision.connector)
