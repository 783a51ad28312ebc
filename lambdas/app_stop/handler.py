"""Lambda entry of the application stop: two CloudFormation custom resources (Create, Update, Delete).

- Stop before an update (`Custom::SinkApplicationStop`, the application depends on it). Properties:
  `ApplicationName` (the EMR Serverless application's name), `ConfigurationHash` and `References` (what makes
  CloudFormation send an Update exactly when the application's properties change; unread here). Update stops the
  application (see service.py); Create and Delete do nothing: the application is created after this resource and
  deleted before it, and this function's grant on the application (its ARN) exists only once the application does.
- Stop before a delete (`Custom::SinkApplicationStopOnDelete`, which depends on the application and its grant, and
  which the trigger depends on: CloudFormation deletes the trigger, then this resource, then the application).
  Property: `ApplicationId`. Delete stops that application, so that DeleteApplication finds it STOPPED; an
  application already gone is nothing to stop. Create and Update do nothing.

Environment: STREAMING_GRACE_SECONDS (optional: the grace period STREAMING runs, continuous connectors' jobs, are
cancelled with), Powertools'.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools import Logger, Tracer

from lambdas.admin import cfn
from lambdas.app_stop.service import ApplicationStopper

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
tracer = Tracer()
MARGIN_MS = 30_000  # kept to answer CloudFormation before Lambda's timeout


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict, context: LambdaContext) -> dict:
    properties, kind = event["ResourceProperties"], event["RequestType"]
    on_delete = "ApplicationId" in properties
    physical_id = event.get("PhysicalResourceId") or (
        f"sink-application-stop-on-delete-{properties['ApplicationId']}"
        if on_delete
        else f"sink-application-stop-{properties['ApplicationName']}"
    )
    try:
        stopped = {}
        if (kind == "Delete") if on_delete else (kind == "Update"):
            grace = os.environ.get("STREAMING_GRACE_SECONDS")
            stopper = ApplicationStopper(
                boto3.client("emr-serverless"), streaming_grace_seconds=int(grace) if grace else None
            )
            deadline = time.monotonic() + (context.get_remaining_time_in_millis() - MARGIN_MS) / 1000
            if on_delete:
                cancelled = stopper.stop_if_exists(properties["ApplicationId"], deadline)
                stopped = {} if cancelled is None else {properties["ApplicationId"]: cancelled}
            else:
                stopped = {app: stopper.stop(app, deadline) for app in stopper.find(properties["ApplicationName"])}
        logger.info(
            "APPLICATION_STOPPED",
            extra={"request": kind, "before": "delete" if on_delete else "update", "cancelled_runs": stopped},
        )
        cfn.send(event, "SUCCESS", physical_id, data={"Applications": len(stopped)})
        return {"status": "SUCCESS", "cancelled_runs": stopped}
    except Exception as e:  # every failure must reach CloudFormation, or the stack waits for the service timeout
        logger.exception("APPLICATION_STOP_FAILED")
        cfn.send(event, "FAILED", physical_id, reason=f"{type(e).__name__}: {e}")
        return {"status": "FAILED", "reason": str(e)}
