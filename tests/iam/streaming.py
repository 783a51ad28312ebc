"""A deployment whose connector runs continuously, in a world of its own: the dev stacks synthesized with the test
connector opted in (`continuous.connectors.<name>`, a 5 s rotation schedule, a 20 s lease), a broker and an
IAM-enforcing moto whose EMR Serverless follows AWS's life cycle (tests/iam/emr_lifecycle.py: runs stay RUNNING until
cancelled, and `mode`, `retryPolicy`, the timeout asked for and the cancellation's grace period are kept on each
run), the bucket, table and application under the template's names, one moto role per deployed role, and the
connector index published by the admin's Create as its role.

Used by tests/iam/test_streaming_under_iam.py (the trigger's handler in-process, as its role) and
tests/e2e/test_streaming_chain.py (the packaged trigger, and the job run from its StartJobRun).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from devtools.stack import LocalStack
from infra.settings import ENVIRONMENTS_DIR, Settings, parse_settings
from tests.iam.deployment import ENV, Deployed, Synthesized, connector_document, synthesize
from tests.iam.world import ADMIN_REQUESTS, IamWorld, Principal

SCHEDULE_MS = 5_000  # the connector's rotate.schedule.interval.ms: a record lands within about 5 s
LEASE_MS = 20_000  # its sink.lease.duration.ms: a stopped job's lease is free soon, the grace period is 50 s
FRESHNESS_ALARM_S = 60
RETRIES_PER_HOUR = 3


def streaming_settings() -> Settings:
    """dev's settings with the test connector continuous."""
    doc = json.loads((ENVIRONMENTS_DIR / f"{ENV}.json").read_text())
    name = json.loads((ENVIRONMENTS_DIR.parent / "connectors" / ENV / "orders.json").read_text())["name"]
    doc["continuous"] = {
        "connectors": {
            name: {"freshness_alarm_seconds": FRESHNESS_ALARM_S, "max_failed_attempts_per_hour": RETRIES_PER_HOUR}
        }
    }
    return parse_settings(ENV, doc, f"{ENV}.json")


def streaming_connector_document(bootstrap_servers: str) -> dict:
    """tests/iam's connector with the schedule and lease of a continuous connector in these tests, and one task (its
    job then has one 1-vCPU executor, which a worker of the e2e chain's standalone cluster holds)."""
    document = connector_document(bootstrap_servers)
    return {
        **document,
        "config": {
            **document["config"],
            "rotate.schedule.interval.ms": str(SCHEDULE_MS),
            "sink.lease.duration.ms": str(LEASE_MS),
            "tasks.max": "1",
        },
    }


@dataclass(frozen=True)
class StreamingWorld:
    stack: LocalStack
    world: IamWorld
    deployed: Deployed
    principals: dict[str, Principal]  # admin, trigger, job (the connector's)
    index: list[dict]  # the connector index the admin's Create published

    @property
    def application(self) -> str:
        return self.deployed.environment("lambdas.trigger.handler.handler")["APPLICATION_ID"]

    def runs(self) -> list[dict]:
        """The application's job runs as moto keeps them (its state API: no look), oldest first."""
        runs = [
            r for r in self.world.models("emrserverless").get("JobRun", []) if r["application_id"] == self.application
        ]
        return sorted(runs, key=lambda r: int((r.get("tags") or {}).get("attempt", 0)))


@contextmanager
def streaming_world(outdir: Path) -> Iterator[StreamingWorld]:
    from infra.constructs.admin import RESOURCE_TYPE
    from sink_engine.offsets import ensure_table
    from tests.cloudformation import custom_resource_event, response_endpoint
    from tests.connector_index import read_index
    from tests.iam.functions import HANDLERS, LambdaContext, as_function
    from tests.iam.template import connector_role, custom_resource_property, function_role

    with (
        LocalStack(iam_free_requests=ADMIN_REQUESTS, moto_module="tests.iam.emr_lifecycle") as stack,
        response_endpoint() as (url, responses),
    ):
        world = IamWorld(stack.aws_endpoint, streaming_settings().region)
        synthesized: Synthesized = synthesize(
            streaming_connector_document(stack.bootstrap_servers), outdir, streaming_settings()
        )
        settings = synthesized.settings
        world.admin.client("s3").create_bucket(
            Bucket=settings.bucket_name, CreateBucketConfiguration={"LocationConstraint": settings.region}
        )
        ensure_table(world.admin.client("dynamodb"), settings.table_name)
        (application,) = [
            k
            for k, r in synthesized.templates["service"]["Resources"].items()
            if r["Type"] == "AWS::EMRServerless::Application"
        ]
        application_id = world.admin.client("emr-serverless").create_application(
            name=f"sink-{ENV}", releaseLabel=settings.emr.release_label, type="SPARK"
        )["applicationId"]
        deployed = Deployed.of(synthesized, {application: application_id})
        template = synthesized.templates["service"]
        role_ids = {name: function_role(template, handler) for name, handler in HANDLERS.items() if name != "replay"}
        role_ids["job"] = connector_role(template, synthesized.connector)
        principals = {
            name: world.role(deployed.role_name(role_id), deployed.documents(role_id))
            for name, role_id in role_ids.items()
        }
        state = deployed.in_moto(
            custom_resource_property(template, RESOURCE_TYPE, "State", deployed.physical["service"])
        )
        create = custom_resource_event(
            "Create", url, {"ServiceToken": "arn", "State": state}, RESOURCE_TYPE, "streaming-create"
        )
        with as_function(deployed, principals["admin"], HANDLERS["admin"], None) as handler:
            handler(create, LambdaContext())
        assert responses[-1]["Status"] == "SUCCESS", responses[-1]
        index = read_index(deployed.environment(HANDLERS["trigger"])["CONNECTORS_URI"], world.admin.client("s3"))
        yield StreamingWorld(stack, world, deployed, principals, index)
