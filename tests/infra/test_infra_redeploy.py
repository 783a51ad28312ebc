"""What a second deployment of the service stack meets on AWS: an update of the EMR application while it is
STARTED (stopped first by the ApplicationStop custom resource), a re-create after a destroy (the job's log group
is not left in the way), an asset bucket under the bootstrap's own KMS key, and max capacity for the runs."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
from aws_cdk import Environment, Stack, Tags
from aws_cdk import aws_kms as kms

from infra import capacity
from infra.application import new_app
from infra.capacity import Concurrency, Footprint, check_concurrency, environment_runs
from infra.connectors import load_connectors
from infra.constructs.application_stop import RESOURCE_TYPE, RESOURCE_TYPE_ON_DELETE, STOP_ACTIONS, ApplicationStop
from infra.constructs.emr_job import SinkJob
from infra.constructs.lambda_function import LibrariesLayer
from infra.constructs.nag import logical_id
from infra.errors import SettingsError
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from infra.stacks.connectors import ConnectorStacks
from tests.infra.conftest import ensure_artifacts

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
BOOTSTRAP_KEY = "arn:aws:kms:eu-west-1:111111111111:key/0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d"


def _settings(change=lambda doc: None):
    doc = copy.deepcopy(DEV)
    change(doc)
    return parse_settings("dev", doc, "dev.json")


def _job_template(tmp_path, settings, tags=None) -> dict:
    """SinkJob and ApplicationStop alone in a stack of the environment, tagged `tags`, synthesized."""
    ensure_artifacts()
    app = new_app(str(tmp_path))
    stack = Stack(app, "Job", env=Environment(account=settings.account, region=settings.region))
    key = kms.Key(stack, "Key")
    job = SinkJob(
        stack,
        "Job",
        settings=settings,
        data_key=key,
        connectors=load_connectors(settings),
        table_arn="arn:aws:dynamodb:eu-west-1:111111111111:table/offsets",
        placement=ConnectorStacks(stack, 0),
    )
    ApplicationStop(
        stack,
        "ApplicationStop",
        settings=settings,
        application=job.application,
        layer=LibrariesLayer(stack, "Libraries").layer,
    )
    for name, value in (tags or {"environment": "dev"}).items():
        Tags.of(stack).add(name, value)
    app.synth()
    return json.loads((tmp_path / "Job.template.json").read_text())


def _of_type(template: dict, kind: str) -> dict[str, dict]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}


def _stop_properties(template: dict) -> dict:
    (resource,) = _of_type(template, RESOURCE_TYPE).values()
    return resource["Properties"]


# -- the application is stopped before CloudFormation updates it ------------------------------------------------


def test_the_application_depends_on_the_stop_resource_which_names_it(each_env):
    template = each_env.templates["service"]
    ((stop_id, stop),) = _of_type(template, RESOURCE_TYPE).items()
    (application,) = _of_type(template, "AWS::EMRServerless::Application").values()
    assert stop_id in application["DependsOn"]
    assert stop["Properties"]["ApplicationName"] == application["Properties"]["Name"]
    assert len(stop["Properties"]["ConfigurationHash"]) == 64
    # the image's URI (its domain's ${AWS::URLSuffix}) and the log group's name (CloudFormation's) are
    # intrinsics: their references ride along, rendered at deploy time
    assert stop["Properties"]["References"] == [
        application["Properties"]["ImageConfiguration"]["ImageUri"],
        application["Properties"]["MonitoringConfiguration"]["CloudWatchLoggingConfiguration"]["LogGroupName"],
    ]


def test_the_stop_function_may_stop_that_application_only(each_env):
    template = each_env.templates["service"]
    (stop,) = _of_type(template, RESOURCE_TYPE).values()
    function_id = stop["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    role_id = template["Resources"][function_id]["Properties"]["Role"]["Fn::GetAtt"][0]
    application_id = next(iter(_of_type(template, "AWS::EMRServerless::Application")))
    arn = {"Fn::GetAtt": [application_id, "Arn"]}
    statements = [
        s
        for p in _of_type(template, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    by_resource = {
        json.dumps(s["Resource"], sort_keys=True): sorted(
            s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        )
        for s in statements
    }
    assert by_resource == {
        json.dumps([arn, {"Fn::Join": ["", [arn, "/jobruns/*"]]}], sort_keys=True): sorted(STOP_ACTIONS),
        json.dumps("*"): ["emr-serverless:ListApplications", "xray:PutTelemetryRecords", "xray:PutTraceSegments"],
    }
    # the grant on the application is not something the function (so the resource) waits for: no cycle
    policy_ids = [
        k
        for k, p in _of_type(template, "AWS::IAM::Policy").items()
        if "Fn::GetAtt" in json.dumps(p)
        and application_id in json.dumps(p)
        and {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    assert policy_ids and not set(policy_ids) & set(template["Resources"][function_id].get("DependsOn", []))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return _stop_properties(_job_template(tmp_path_factory.mktemp("baseline"), _settings()))


@pytest.mark.parametrize(
    "change, tags, changes",
    [
        (lambda doc: doc["emr"].update(idle_timeout_minutes=10), None, True),
        (lambda doc: doc["emr"]["max_capacity"].update(cpu="48 vCPU"), None, True),
        (lambda doc: doc["network"].update(security_group_ids=["sg-0f1e2d3c4b5a69788"]), None, True),
        (lambda doc: None, {"environment": "dev", "owner": "data"}, True),  # a tag: CloudFormation updates it too
        (lambda doc: doc["emr"].update(interpreter="system"), None, True),  # the image configuration goes
        # not properties of the application: no stop
        (lambda doc: doc["trigger"].update(batch_size=500), None, False),
        (lambda doc: doc["emr"].update(job_timeout_minutes=90), None, False),
        (lambda doc: doc["emr"].update(max_executors_per_run=2), None, False),
    ],
    ids=["auto-stop", "capacity", "network", "tags", "interpreter", "trigger", "job-timeout", "executors"],
)
def test_the_stop_fires_exactly_when_the_application_changes(tmp_path, baseline, change, tags, changes):
    # given the environment synthesized once, when synthesized again with one setting changed
    properties = _stop_properties(_job_template(tmp_path, _settings(change), tags))
    # then the stop resource's properties change (CloudFormation sends it an Update) iff the application's do
    assert (properties != baseline) is changes
    assert (properties["ConfigurationHash"] != baseline["ConfigurationHash"]) is changes


# -- the application is stopped before CloudFormation deletes it -------------------------------------------------


def _references(value) -> set[str]:
    """The logical ids `value` refers to (Ref and Fn::GetAtt), parameters and pseudo parameters included."""
    if isinstance(value, dict):
        if set(value) == {"Ref"}:
            return {value["Ref"]}
        if set(value) == {"Fn::GetAtt"}:
            return {value["Fn::GetAtt"][0]}
        return {r for v in value.values() for r in _references(v)}
    if isinstance(value, list):
        return {r for v in value for r in _references(v)}
    return set()


def _dependencies(template: dict) -> dict[str, set[str]]:
    """Logical id -> every resource it depends on, transitively (DependsOn and references): CloudFormation deletes a
    resource only after every resource that depends on it ("DependsOn attribute", CloudFormation User Guide)."""
    resources = template["Resources"]
    direct = {
        k: ({*r.get("DependsOn", [])} | _references(r.get("Properties", {}))) & set(resources)
        for k, r in resources.items()
    }
    closed: dict[str, set[str]] = {}

    def walk(k: str) -> set[str]:
        if k not in closed:
            closed[k] = set()
            closed[k] = set().union(*({d} | walk(d) for d in direct[k])) if direct[k] else set()
        return closed[k]

    return {k: walk(k) for k in resources}


def test_the_application_is_stopped_after_the_trigger_is_gone_and_before_it_is_deleted(each_env):
    # DeleteApplication needs CREATED or STOPPED (EMR Serverless API Reference, DeleteApplication), and the
    # application stays STARTED until its idle stop after any run
    template = each_env.templates["service"]
    (application_id,) = _of_type(template, "AWS::EMRServerless::Application")
    ((stop_id, stop),) = _of_type(template, RESOURCE_TYPE_ON_DELETE).items()
    depends = _dependencies(template)
    # the stop names the application, and is deleted before it and before the stop function's grant on it
    assert stop["Properties"]["ApplicationId"] == {"Fn::GetAtt": [application_id, "ApplicationId"]}
    policy_id = logical_id(each_env.deployment.service.application_stop.policy.node.default_child)
    function_id = stop["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    assert {application_id, policy_id, function_id} <= depends[stop_id]
    # and after everything that starts runs: the trigger, its MSK event sources, the schedules invoking it and
    # their grants to invoke it
    trigger_id = logical_id(each_env.deployment.service.trigger.function.node.default_child)
    starters = {
        k
        for k, r in template["Resources"].items()
        if r["Type"] in ("AWS::Lambda::EventSourceMapping", "AWS::Events::Rule", "AWS::Lambda::Permission")
        and trigger_id in _references(r.get("Properties", {}))
    }
    assert any(template["Resources"][k]["Type"] == "AWS::Lambda::EventSourceMapping" for k in starters)
    assert sorted(k for k in starters | {trigger_id} if stop_id not in depends[k]) == []


# -- a re-created stack does not meet its own log group ----------------------------------------------------------


def test_the_job_log_group_has_a_generated_name_and_is_kept(each_env):
    template = each_env.templates["service"]
    (application,) = _of_type(template, "AWS::EMRServerless::Application").values()
    group_id = application["Properties"]["MonitoringConfiguration"]["CloudWatchLoggingConfiguration"]["LogGroupName"][
        "Ref"
    ]
    group = template["Resources"][group_id]
    assert "LogGroupName" not in group["Properties"]  # a fixed name, retained, made the next create fail
    assert group["DeletionPolicy"] == "Retain"
    assert group["Properties"]["RetentionInDays"] == each_env.deployment.settings.retention.log_retention_days
    # each job role writes that group, whatever CloudFormation names it
    prefix = f"arn:aws:logs:{each_env.deployment.settings.region}:{each_env.deployment.settings.account}:log-group:"
    expected = [{"Fn::Join": ["", [prefix, {"Ref": group_id}, ":*"]]}, {"Fn::Join": ["", [prefix, {"Ref": group_id}]]}]
    for role in each_env.deployment.service.job.roles.values():
        policy = next(
            p
            for p in _of_type(template, "AWS::IAM::Policy").values()
            if {"Ref": logical_id(role.node.default_child)} in p["Properties"]["Roles"]
        )
        (logs,) = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if "logs:PutLogEvents" in s["Action"]]
        assert sorted(logs["Resource"], key=json.dumps) == sorted(expected, key=json.dumps)


# -- the bootstrap's customer managed key -------------------------------------------------------------------------


def _kms_statements(template: dict) -> list[dict]:
    return [
        s
        for p in _of_type(template, "AWS::IAM::Policy").values()
        if "JobRole" in json.dumps(p["Properties"]["Roles"])
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Resource"] == BOOTSTRAP_KEY
    ]


def test_job_roles_decrypt_with_the_bootstrap_key_through_s3_when_named(tmp_path):
    settings = _settings(lambda doc: doc.update(cdk_bootstrap_kms_key_arn=BOOTSTRAP_KEY))
    statements = _kms_statements(_job_template(tmp_path, settings))
    assert statements == [
        {
            "Action": "kms:Decrypt",
            "Effect": "Allow",
            "Resource": BOOTSTRAP_KEY,
            "Condition": {"StringEquals": {"kms:ViaService": "s3.eu-west-1.amazonaws.com"}},
        }
    ] * len(load_connectors(settings))


def test_job_roles_get_no_bootstrap_key_grant_without_one(each_env):
    assert each_env.deployment.settings.cdk_bootstrap_kms_key_arn is None
    assert "kms:ViaService" not in json.dumps(each_env.templates["service"])


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:kms:eu-west-1:111111111111:alias/cdk",
        "key/0a1b2c3d",
        "arn:aws:kms:us-east-1:111111111111:key/0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d",
        "arn:aws:kms:eu-west-1:999999999999:key/0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d",
    ],
)
def test_a_bootstrap_key_that_is_not_a_key_of_the_environment_is_named(arn):
    with pytest.raises(SettingsError) as failed:
        _settings(lambda doc: doc.update(cdk_bootstrap_kms_key_arn=arn))
    assert failed.value.setting == "cdk_bootstrap_kms_key_arn"


# -- the application runs every run that may be under way at once, within its capacity ---------------------------


def _copies(connectors, n: int, **changes):
    """`n` connectors like the first of `connectors`, named c0..c<n-1>, with `changes`."""
    return tuple(dataclasses.replace(connectors[0], name=f"c{i}", **changes) for i in range(n))


def test_the_application_runs_every_run_of_the_environment_at_once(each_env):
    # from release 7.3.0 EMR Serverless queues runs past MaxConcurrentRuns, 15 unless set ("EMR Serverless 7.3.0"
    # release notes; AWS::EMRServerless::Application SchedulerConfiguration): the stack sets it
    template, deployment = each_env.templates["service"], each_env.deployment
    (application,) = _of_type(template, "AWS::EMRServerless::Application").values()
    runs = environment_runs(deployment.settings, deployment.connectors)
    assert application["Properties"]["SchedulerConfiguration"] == {"MaxConcurrentRuns": len(runs)}
    # one data run per connector, its upkeep (Iceberg) and restore (when deployed), and one doctor
    expected = {
        "dev": ["data run of orders-s3-sink", "restore of orders-s3-sink", "doctor"],
        "prod": ["data run of audit-s3-sink", "data run of orders-s3-sink", "doctor"],
    }[each_env.env]
    assert [name for name, _ in runs] == expected
    # and the capacity holds them all at their largest
    need = deployment.service.job.concurrency.footprint
    assert need == sum((Footprint.of(plan) for _, plan in runs), Footprint(0, 0, 0))
    emr = deployment.settings.emr
    assert all(
        wanted <= int(have.split()[0])
        for wanted, have in zip((need.cpu, need.memory, need.disk), (emr.max_cpu, emr.max_memory, emr.max_disk))
    )


def test_an_environment_of_more_than_fifteen_connectors_runs_them_all_at_once(dev):
    # given 30 connectors (EMR's default would run 15 and queue the others for up to six hours)
    roomy = _settings(lambda doc: doc["emr"]["max_capacity"].update(cpu="400 vCPU", memory="3000 GB", disk="20000 GB"))
    concurrency = check_concurrency(roomy, _copies(dev.deployment.connectors, 30, restore_targets=()))
    # then all 30 data runs and the doctor run at once
    assert concurrency.runs == 31


def test_a_data_runs_largest_plan_follows_tasks_max_and_max_executors_per_run(dev):
    # dev's connector has tasks.max 4 and emr.max_executors_per_run 1: one 4-vCPU executor beside a 1-vCPU driver
    ((name, plan), *_) = environment_runs(dev.deployment.settings, dev.deployment.connectors)
    assert (name, Footprint.of(plan)) == ("data run of orders-s3-sink", Footprint(5, 10, 40))
    # with tasks.max 16 and two executors per run: two 4-vCPU executors (8 GB each), not four
    spec = dev.deployment.connectors[0]
    wide = dataclasses.replace(
        spec, document={**spec.document, "config": {**spec.document["config"], "tasks.max": "16"}}
    )
    settings = _settings(lambda doc: doc["emr"].update(max_executors_per_run=2))
    ((_, plan), *_) = environment_runs(settings, (wide,))
    assert Footprint.of(plan) == Footprint(9, 18, 60)


@pytest.mark.parametrize(
    "capacity, setting",
    [
        ({"cpu": "8 vCPU", "memory": "128 GB", "disk": "200 GB"}, "emr.max_capacity.cpu"),  # 9 vCPU needed
        ({"cpu": "32 vCPU", "memory": "16 GB", "disk": "200 GB"}, "emr.max_capacity.memory"),  # 30 GB
        ({"cpu": "32 vCPU", "memory": "128 GB", "disk": "100 GB"}, "emr.max_capacity.disk"),  # 120 GB
    ],
)
def test_a_capacity_that_cannot_hold_the_concurrent_runs_refuses_synthesis(dev, capacity, setting):
    settings = _settings(lambda doc: doc["emr"]["max_capacity"].update(capacity))
    with pytest.raises(SettingsError, match="emr.concurrent_runs") as failed:
        check_concurrency(settings, dev.deployment.connectors)
    assert failed.value.setting == setting
    # accepting that runs queue: the capacity must hold as many of the largest as stated
    queueing = dataclasses.replace(settings, emr=dataclasses.replace(settings.emr, concurrent_runs=1))
    assert check_concurrency(queueing, dev.deployment.connectors) == Concurrency(1, Footprint(5, 10, 40))


def test_more_runs_than_emr_admits_at_once_refuse_synthesis_unless_concurrent_runs_says_how_many(dev, monkeypatch):
    monkeypatch.setattr(capacity, "MAX_CONCURRENT_RUNS", 2)  # 1000 on AWS
    with pytest.raises(SettingsError) as failed:
        check_concurrency(_settings(), dev.deployment.connectors)  # three runs
    assert failed.value.setting == "emr.concurrent_runs"
    stated = _settings(lambda doc: doc["emr"].update(concurrent_runs=2))
    assert check_concurrency(stated, dev.deployment.connectors).runs == 2


def test_max_executors_per_run_reaches_the_trigger_and_no_spark_setting_pretends_to_bound_runs(each_env):
    # the trigger turns dynamic allocation off and sets spark.executor.instances (lambdas/trigger/sizing.py), so
    # spark.dynamicAllocation.maxExecutors would have no effect: the limit is the trigger's
    settings = each_env.deployment.settings
    function = each_env.deployment.service.trigger.function.node.default_child
    variables = each_env.templates["service"]["Resources"][logical_id(function)]["Properties"]["Environment"][
        "Variables"
    ]
    assert variables["MAX_EXECUTORS_PER_RUN"] == str(settings.emr.max_executors_per_run)
    assert "maxExecutors" not in each_env.deployment.service.job.spark_parameters


@pytest.mark.parametrize(
    "emr, setting",
    [
        ({"max_executors_per_run": 0}, "emr.max_executors_per_run"),
        ({"concurrent_runs": "2"}, "emr.concurrent_runs"),
        ({"concurrent_runs": 0}, "emr.concurrent_runs"),
    ],
)
def test_malformed_run_settings_are_named(emr, setting):
    with pytest.raises(SettingsError) as failed:
        _settings(lambda doc: doc["emr"].update(emr))
    assert failed.value.setting == setting
