"""Lambda entry of the application stop: a CloudFormation custom resource (Create, Update, Delete).

Properties: `ApplicationName` (the EMR Serverless application's name), `ConfigurationHash` and `References`
(what makes CloudFormation send an Update exactly when the application's properties change; unread here).
Update stops the application (see service.py). Create and Delete do nothing: the application is created after
this resource and deleted before it, and this function's grant on the application (its ARN) exists only once the
application does. Environment: Powertools'.
"""
from __future__ import annotations

import time

import boto3
from aws_lambda_powertools import Logger, Tracer

from lambdas.admin import cfn
from lambdas.app_stop.service import ApplicationStopper

logger = Logger()
tracer = Tracer()
MARGIN_MS = 30_000  # kept to answer CloudFormation before Lambda's timeout


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def handler(event: dict, context) -> dict:
    name = event["ResourceProperties"]["ApplicationName"]
    physical_id = event.get("PhysicalResourceId") or f"sink-application-stop-{name}"
    try:
        stopped = {}
        if event["RequestType"] == "Update":
            stopper = ApplicationStopper(boto3.client("emr-serverless"))
            deadline = time.monotonic() + (context.get_remaining_time_in_millis() - MARGIN_MS) / 1000
            stopped = {app: stopper.stop(app, deadline) for app in stopper.find(name)}
        logger.info("APPLICATION_STOPPED", extra={"request": event["RequestType"], "cancelled_runs": stopped})
        cfn.send(event, "SUCCESS", physical_id, data={"Applications": len(stopped)})
        return {"status": "SUCCESS", "cancelled_runs": stopped}
    except Exception as e:  # every failure must reach CloudFormation, or the stack waits for the service timeout
        logger.exception("APPLICATION_STOP_FAILED")
        cfn.send(event, "FAILED", physical_id, reason=f"{type(e).__name__}: {e}")
        return {"status": "FAILED", "reason": str(e)}
