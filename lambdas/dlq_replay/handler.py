"""Lambda entry of the DLQ replay, invoked by an operator:

    aws lambda invoke --function-name <replay function> --cli-binary-format raw-in-base64-out \
        --payload '{"connector": "orders-s3-sink", "dry_run": true}' out.json

Payload: see `sink_engine.dlq.replay_request`. Environment: CONNECTORS (JSON, as the trigger's: each connector's
config URI, whose config names the offsets table and the dead-letter queue), and Powertools' variables.
"""
from __future__ import annotations

import os
import time
from functools import lru_cache

import boto3
from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from lambdas.dlq_replay.service import ReplayService, config_uris_from_json
from sink_engine.errors import ConfigError

logger = Logger()
tracer = Tracer()


@lru_cache(maxsize=1)
def _service() -> ReplayService:
    return ReplayService(config_uris_from_json(os.environ["CONNECTORS"]), boto3.client("dynamodb"),
                         boto3.client("s3"), lambda: int(time.time() * 1000))


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict, context) -> dict:
    try:
        result = _service().handle(event)
    except ConfigError as e:  # a bad payload: answered, not retried
        logger.warning("DLQ_REPLAY_REJECTED", extra={"field": e.key, "error": str(e)})
        return {"error": str(e), "field": e.key}
    logger.info("DLQ_REPLAYED", extra=result)
    with single_metric(name="DeadLettersReplayed", unit=MetricUnit.Count,
                       value=0 if result["dry_run"] else result["totals"]["replayed"]) as metric:
        metric.add_dimension(name="Connector", value=result["connector"])
    return result
