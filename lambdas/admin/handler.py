"""Lambda entry of the admin: a CloudFormation custom resource (Create, Update, Delete) or a direct invoke.

Direct invoke payloads: {"action": "plan"} (dry run: the changes an apply would make) or {"action": "apply"};
both use the desired state stored by the last deployment. Environment: BUCKET, CONFIG_PREFIX, Powertools'.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from lambdas.admin import cfn
from lambdas.admin.desired import DesiredState
from lambdas.admin.live import LiveState
from lambdas.admin.service import AdminService

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
tracer = Tracer()
metrics = Metrics()


def _service() -> AdminService:
    return AdminService(LiveState(boto3.client("s3")))


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict, context: LambdaContext) -> dict:
    if "RequestType" in event:
        return _custom_resource(event)
    return _direct(event.get("action", "plan"))


def _custom_resource(event: dict) -> dict:
    physical_id = event.get("PhysicalResourceId") or f"sink-connectors-{os.environ['BUCKET']}"
    try:
        desired = DesiredState.from_json(event["ResourceProperties"]["State"])
        delete = event["RequestType"] == "Delete"
        changes = _service().remove(desired) if delete else _service().apply(desired).changes
        logger.info("CONNECTORS_RECONCILED", extra={"request": event["RequestType"], "changes": changes})
        metrics.add_metric(name="ReconcileChanges", unit=MetricUnit.Count, value=len(changes))
        cfn.send(event, "SUCCESS", physical_id, data={"Changes": len(changes)})
        return {"status": "SUCCESS", "changes": changes}
    except Exception as e:  # every failure must reach CloudFormation, or the stack waits for an hour
        logger.exception("RECONCILE_FAILED")
        metrics.add_metric(name="ReconcileFailures", unit=MetricUnit.Count, value=1)
        cfn.send(event, "FAILED", physical_id, reason=f"{type(e).__name__}: {e}")
        return {"status": "FAILED", "reason": str(e)}


def _direct(action: str) -> dict:
    if action not in ("plan", "apply"):
        raise ValueError(f"action must be 'plan' or 'apply', not {action!r}")
    service = _service()
    desired = service.stored_state(os.environ["BUCKET"], os.environ["CONFIG_PREFIX"])
    if desired is None:
        return {"action": action, "changes": [], "note": "no desired state stored yet; deploy the stack first"}
    plan = service.apply(desired) if action == "apply" else service.plan(desired)
    logger.info("CONNECTORS_PLANNED" if action == "plan" else "CONNECTORS_RECONCILED", extra={"changes": plan.changes})
    metrics.add_metric(
        name="ReconcileChanges", unit=MetricUnit.Count, value=len(plan.changes) if action == "apply" else 0
    )
    return {"action": action, "changes": plan.changes}
