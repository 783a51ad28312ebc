"""IAM enforced: a LocalStack of its own whose moto authorizes every request, the dev stacks synthesized for the
test connector, one moto role per deployed role (its documents taken from the template), and the functional
runs (admin Create, engine run and status, trigger, replay) made once per session under those roles, with every
AWS call they make recorded for test_recorded_calls.py.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import pytest

from devtools.stack import LocalStack
from sink_engine.run.metrics import CLOUDWATCH
from sink_engine.run.metrics import SETTING as METRICS_SETTING
from sink_engine.run.preflight import BUCKET_MANAGED_SETTING
from tests.cloudformation import custom_resource_event, response_endpoint
from tests.connector_index import read_index
from tests.iam.acting import acting_as
from tests.iam.deployment import ENV, TEST_SETTINGS, Deployed, Synthesized, connector_document, synthesize
from tests.iam.engine import CliResult, Landed, Workload, landed, produce_workload, run_cli
from tests.iam.functions import HANDLERS, LambdaContext, as_function
from tests.iam.recorder import CallLog
from tests.iam.template import connector_role, custom_resource_property, function_role
from tests.iam.world import ADMIN_REQUESTS, IamWorld, Principal

# Powertools reads these when a handler module is imported, as Lambda sets them before it imports the handler.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "SinkEngine")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")


@pytest.fixture(scope="session")
def iam_stack():
    """Broker and moto of their own: moto enforces IAM after the admin's requests; the suite's stack is untouched."""
    with LocalStack(iam_free_requests=ADMIN_REQUESTS) as running:
        yield running


@pytest.fixture(scope="session")
def world(iam_stack) -> IamWorld:
    from infra.settings import load_settings

    return IamWorld(iam_stack.aws_endpoint, load_settings(ENV).region)


@pytest.fixture(scope="session")
def iam_synthesized(iam_stack, tmp_path_factory) -> Synthesized:
    return synthesize(connector_document(iam_stack.bootstrap_servers), tmp_path_factory.mktemp("iam-synth"))


@pytest.fixture(scope="session")
def deployed(world, iam_synthesized) -> Deployed:
    """The bucket, the offsets table and the EMR application, created by the admin under the template's names."""
    from sink_engine.offsets import ensure_table

    settings = iam_synthesized.settings
    world.admin.client("s3").create_bucket(
        Bucket=settings.bucket_name, CreateBucketConfiguration={"LocationConstraint": settings.region}
    )
    ensure_table(world.admin.client("dynamodb"), settings.table_name)
    (application,) = [
        k
        for k, r in iam_synthesized.templates["service"]["Resources"].items()
        if r["Type"] == "AWS::EMRServerless::Application"
    ]
    application_id = world.admin.client("emr-serverless").create_application(
        name=f"sink-{ENV}", releaseLabel=settings.emr.release_label, type="SPARK"
    )["applicationId"]
    return Deployed.of(iam_synthesized, {application: application_id})


@pytest.fixture(scope="session")
def role_ids(deployed) -> dict[str, str]:
    """The logical id of each deployed role, by name: admin, trigger, replay, job (the connector's)."""
    template = deployed.synthesized.templates["service"]
    roles = {name: function_role(template, handler) for name, handler in HANDLERS.items()}
    roles["job"] = connector_role(template, deployed.synthesized.connector)
    return roles


@pytest.fixture(scope="session")
def principals(world, deployed, role_ids) -> dict[str, Principal]:
    """One moto role per deployed role, with exactly that role's documents (moto copies)."""
    return {
        name: world.role(deployed.role_name(role_id), deployed.documents(role_id)) for name, role_id in role_ids.items()
    }


@pytest.fixture(scope="session")
def call_log(tmp_path_factory) -> CallLog:
    return CallLog(tmp_path_factory.mktemp("iam-calls") / "calls.jsonl")


@pytest.fixture(scope="session")
def cloudformation():
    """Where the custom resource's pre-signed ResponseURL points: (url, the responses received)."""
    with response_endpoint() as endpoint:
        yield endpoint


@dataclass(frozen=True)
class EngineRun:
    workload: Workload
    config_uri: str
    run: CliResult
    status: CliResult
    landed: Landed  # read right after the run, before other tests add to the bucket and the table


@pytest.fixture(scope="session")
def config_uri(deployed, published, world) -> str:
    """Where the deployed functions find the connector's config: its entry in the connector index the admin
    published, at the stack's CONNECTORS_URI."""
    (connector,) = read_index(deployed.environment(HANDLERS["replay"])["CONNECTORS_URI"], world.admin.client("s3"))
    return connector["config_uri"]


@pytest.fixture(scope="session")
def published(deployed, principals, call_log, cloudformation) -> dict:
    """The admin's Create, as CloudFormation sends it with the template's State: publishes the connector config."""
    from infra.constructs.admin import RESOURCE_TYPE

    url, responses = cloudformation
    state = deployed.in_moto(
        custom_resource_property(
            deployed.synthesized.templates["service"], RESOURCE_TYPE, "State", deployed.physical["service"]
        )
    )
    event = custom_resource_event("Create", url, {"ServiceToken": "arn", "State": state}, RESOURCE_TYPE, "create-1")
    with as_function(deployed, principals["admin"], HANDLERS["admin"], call_log) as handler:
        answer = handler(event, LambdaContext())
    return {"answer": answer, "response": responses[-1]}


@pytest.fixture(scope="session")
def engine_run(iam_stack, world, deployed, principals, published, config_uri, spark, call_log) -> EngineRun:
    """`sink-engine run` then `status` under the connector's job role (driver and Spark workers), with the driver
    environment the deployed job sets (SINK_METRICS=cloudwatch: the run publishes its metrics; SINK_BUCKET_MANAGED=true:
    the stack's bucket is not checked)."""
    workload = produce_workload(iam_stack.bootstrap_servers)
    with acting_as(principals["job"], call_log, spark), pytest.MonkeyPatch.context() as env:
        env.setenv(METRICS_SETTING, CLOUDWATCH)
        env.setenv(BUCKET_MANAGED_SETTING, "true")
        run = run_cli("run", "--config", config_uri)
        status = run_cli("status", "--config", config_uri)
    settings, connector = deployed.synthesized.settings, deployed.synthesized.connector
    after = landed(
        world.admin, settings.bucket_name, settings.table_name, connector, deployed.synthesized.dead_letter_prefix
    )
    return EngineRun(workload, config_uri, run, status, after)


@pytest.fixture(scope="session")
def triggered(deployed, principals, published, call_log) -> dict:
    """An MSK batch of a full file's worth of hour-old records on one partition, as the trigger role."""
    from tests.lambdas.conftest import msk_event

    hour_ago = int(time.time() * 1000) - 3_600_000
    records = [("orders", 1, 100_000 + i, hour_ago) for i in range(int(TEST_SETTINGS["flush.size"]))]
    with as_function(deployed, principals["trigger"], HANDLERS["trigger"], call_log) as handler:
        return handler(msk_event(records), LambdaContext())


@pytest.fixture(scope="session")
def replayed(engine_run, deployed, principals, call_log) -> dict:
    """The dead letters of the engine run replayed to their topic, as the replay role."""
    with as_function(deployed, principals["replay"], HANDLERS["replay"], call_log) as handler:
        return handler({"connector": deployed.synthesized.connector}, LambdaContext())
