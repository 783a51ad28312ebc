"""The admin, trigger and DLQ replay handlers under enforced IAM, each with its function's role (documents from
the synthesized template) and the environment the stack deploys for it (see conftest.py)."""

from __future__ import annotations

import json

from tests.dlq_corpus import read_topic
from tests.iam.engine import BAD_VALUES
from tests.iam.functions import HANDLERS, LambdaContext, as_function


def test_the_admin_create_publishes_the_config_as_its_role(published, world, deployed, config_uri):
    assert published["answer"]["status"] == "SUCCESS", published["answer"]
    assert published["response"]["Status"] == "SUCCESS"
    bucket, key = config_uri.removeprefix("s3://").split("/", 1)
    document = json.loads(world.admin.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())
    assert document["name"] == deployed.synthesized.connector


def test_the_admin_plan_and_apply_as_its_role_find_nothing_to_change(published, deployed, principals, call_log):
    with as_function(deployed, principals["admin"], HANDLERS["admin"], call_log) as handler:
        assert handler({"action": "plan"}, LambdaContext())["changes"] == []
        assert handler({"action": "apply"}, LambdaContext())["changes"] == []


def test_the_trigger_starts_the_run_with_the_connectors_job_role(triggered, world, principals, config_uri):
    (decision,) = triggered["decisions"]
    assert decision["action"] == "started", decision
    (run,) = [r for r in world.models("emrserverless")["JobRun"] if r["id"] == decision["job_run_id"]]
    assert run["execution_role_arn"] == principals["job"].arn
    assert config_uri in run["job_driver"]["sparkSubmit"]["entryPointArguments"]


def test_the_replay_republishes_the_runs_dead_letters_as_its_role(replayed, iam_stack):
    assert replayed["totals"]["replayed"] == len(BAD_VALUES), replayed
    values = [r["value"] for r in read_topic(iam_stack.bootstrap_servers, "orders") if r["partition"] == 0]
    assert values[-len(BAD_VALUES) :] == list(BAD_VALUES)
