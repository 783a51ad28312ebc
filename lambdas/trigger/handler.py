"""Lambda entry of the trigger: an MSK event source batch or the EventBridge idle-flush tick.

Environment: TABLE_NAME, CONNECTORS (JSON), APPLICATION_ID, JOB_ROLE_ARN, ENTRY_POINT, SPARK_PARAMETERS,
JOB_TIMEOUT_MINUTES, MIN_PENDING_RECORDS, MAX_PENDING_AGE_MS, RUN_CLAIM_MS, and Powertools' variables.
"""
from __future__ import annotations

import os
import time
from functools import lru_cache

import boto3
from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.data_classes import KafkaEvent

from lambdas.trigger.pending import Thresholds
from lambdas.trigger.runs import RunStarter
from lambdas.trigger.service import Decision, TriggerService, connectors_from_json, job_from_env
from lambdas.trigger.state import TriggerState

logger = Logger()
tracer = Tracer()


@lru_cache(maxsize=1)
def _service() -> TriggerService:
    env = os.environ
    state = TriggerState(boto3.client("dynamodb"), env["TABLE_NAME"])
    starter = RunStarter(state, boto3.client("emr-serverless"), job_from_env(env), int(env["RUN_CLAIM_MS"]))
    thresholds = Thresholds(int(env["MIN_PENDING_RECORDS"]), int(env["MAX_PENDING_AGE_MS"]))
    return TriggerService(connectors_from_json(env["CONNECTORS"]), state, starter, thresholds,
                          lambda: int(time.time() * 1000))


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict, context) -> dict:
    if event.get("eventSource") == "aws:kafka":
        kafka = KafkaEvent(event)
        decisions = _service().on_batch((r.topic, r.partition, r.offset, r.timestamp) for r in kafka.records)
    else:
        decisions = _service().on_tick()
    for decision in decisions:
        _report(decision)
    return {"decisions": [{"connector": d.connector, "action": d.outcome.action, "reason": d.outcome.reason,
                           "job_run_id": d.outcome.job_run_id, "pending_records": d.pending.records}
                          for d in decisions]}


def _report(decision: Decision) -> None:
    outcome = decision.outcome
    event = "JOB_RUN_STARTED" if outcome.action in ("started", "resumed") else "JOB_RUN_SKIPPED"
    logger.info(event, extra={"connector": decision.connector, "action": outcome.action, "reason": outcome.reason,
                              "job_run_id": outcome.job_run_id, "pending_records": decision.pending.records})
    age_s = decision.pending.age_ms(int(time.time() * 1000)) / 1000
    for name, unit, value in (("PendingRecords", MetricUnit.Count, decision.pending.records),
                              ("OldestPendingAgeSeconds", MetricUnit.Seconds, age_s),
                              ("JobRunsStarted", MetricUnit.Count, 1 if outcome.action == "started" else 0)):
        with single_metric(name=name, unit=unit, value=value) as metric:
            metric.add_dimension(name="Connector", value=decision.connector)
