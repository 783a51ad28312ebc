"""Lambda entry of the DLQ replay, invoked by an operator:

    aws lambda invoke --function-name <replay function> --cli-binary-format raw-in-base64-out \
        --payload '{"connector": "orders-s3-sink", "dry_run": true}' out.json

Payload: see `sink_engine.dlq.replay_request`. Environment: CONNECTORS_URI (the connector index the admin
publishes, as the trigger's: each connector's config URI, whose config names the offsets table and the dead-letter
queue; read on first use and again after `INDEX_TTL_MS`), and Powertools' variables.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from lambdas.dlq_replay.service import ReplayService, config_uris
from lambdas.shared.connector_index import ConnectorIndex
from sink_engine.errors import ConfigError

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
tracer = Tracer()


def _now_ms() -> int:
    return int(time.time() * 1000)


@lru_cache(maxsize=1)
def _service() -> ReplayService:
    s3 = boto3.client("s3")
    index = ConnectorIndex(os.environ["CONNECTORS_URI"], s3, config_uris, _now_ms)
    return ReplayService(index.get, boto3.client("dynamodb"), s3, _now_ms)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict, context: LambdaContext) -> dict:
    try:
        result = _service().handle(event)
    except ConfigError as e:  # a bad payload: answered, not retried
        logger.warning("DLQ_REPLAY_REJECTED", extra={"field": e.key, "error": str(e)})
        return {"error": str(e), "field": e.key}
    logger.info("DLQ_REPLAYED", extra=result)
    with single_metric(
        name="DeadLettersReplayed",
        unit=MetricUnit.Count,
        value=0 if result["dry_run"] else result["totals"]["replayed"],
    ) as metric:
        metric.add_dimension(name="Connector", value=result["connector"])
    return result
