"""The application stop (`Custom::SinkApplicationStop`, and `Custom::SinkApplicationStopOnDelete`) under enforced IAM:
CloudFormation's Update of the first and Delete of the second, as it sends them
(the resource's ApplicationName and ConfigurationHash from the synthesized template, the old properties with another
hash, the ResponseURL answered by a local endpoint), handled by
the packaged function as its role (documents from the synthesized template), against an EMR Serverless application
with active job runs started with the request the trigger made in this session, as the trigger's role.

moto's EMR Serverless has no life cycle, so this runs on a moto of its own whose EMR Serverless follows AWS's
(`tests/iam/emr_lifecycle.py`: runs stay RUNNING until cancelled, CANCELLING before CANCELLED, StopApplication
refused while a run is not over, STOPPING before STOPPED; docs/aws-fidelity.md). The function's polls are
shortened (`POLL_SECONDS`); its calls are the same.

Every call is checked against the role's documents with resource ARNs and conditions (tests/iam/evaluate.py), on the
ARNs the Service Authorization Reference gives EMR Serverless resources ("Actions, resources, and condition keys for
Amazon EMR Serverless", https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonemrserverless.html;
its resource types `application`, `arn:${Partition}:emr-serverless:${Region}:${Account}:/applications/${ApplicationId}`,
and `jobRun`, `.../applications/${ApplicationId}/jobruns/${JobRunId}`, as cfn-lint's copy of AWS's programmatic
reference and the API Reference's JobRun `arn` pattern write them); and against the ARNs the service reports for the
application and its runs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from infra.constructs.application_stop import RESOURCE_TYPE, RESOURCE_TYPE_ON_DELETE
from lambdas.app_stop.service import ApplicationStopper
from tests.cloudformation import custom_resource_event
from tests.iam.actions import needs
from tests.iam.deployment import Deployed
from tests.iam.emr_lifecycle import lifecycle_moto
from tests.iam.evaluate import allows
from tests.iam.functions import LambdaContext, as_function
from tests.iam.policies import without_action
from tests.iam.recorder import CallLog
from tests.iam.template import custom_resource_property, function_environment, function_role
from tests.iam.world import ADMIN_REQUESTS, IamWorld, Principal

APP_STOP = "lambdas.app_stop.handler.handler"
POLL_SECONDS = 0.05
RUNS = 2  # bounded runs, as the trigger starts them; and one STREAMING run (a continuous connector's job)
APPLICATION_ARN = re.compile(r"arn:aws:emr-serverless:[a-z0-9-]+:\d{12}:/applications/(?P<application>[0-9a-z]+)")
JOB_RUN_ARN = re.compile(APPLICATION_ARN.pattern + r"/jobruns/(?P<run>[0-9a-z]+)")
# granted to the Lambda runtime, not to the function's code: logs (AWSLambdaBasicExecutionRole) and X-Ray traces
RUNTIME_SERVICES = ("logs:", "xray:")


@dataclass
class TimedContext(LambdaContext):
    remaining_ms: int = 120_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


@dataclass(frozen=True)
class StopWorld:
    world: IamWorld
    deployed: Deployed  # the synthesized stacks, the application's id being this moto's
    application: str
    runs: tuple[str, ...]  # the bounded runs, then the STREAMING run
    stop: Principal  # the application stop's role

    def states(self) -> dict[str, str]:
        """Application and run ids -> their states (read through moto's API: no look, see emr_lifecycle)."""
        models = self.world.models("emrserverless")
        return {m["id"]: m["state"] for kind in ("Application", "JobRun") for m in models[kind]}

    def graces(self) -> dict[str, int | None]:
        """Run id -> the shutdownGracePeriodInSeconds it was cancelled with (as emr_lifecycle keeps it)."""
        return {
            m["id"]: m.get("shutdown_grace_period_in_seconds") for m in self.world.models("emrserverless")["JobRun"]
        }

    def arns(self) -> dict[str, str]:
        models = self.world.models("emrserverless")
        return {m["id"]: m["arn"] for kind in ("Application", "JobRun") for m in models[kind]}


@pytest.fixture(scope="module")
def stop_role(iam_synthesized) -> str:
    return function_role(iam_synthesized.templates["service"], APP_STOP)


@pytest.fixture(scope="module")
def trigger_request(triggered, call_log, principals) -> dict:
    """The StartJobRun request the trigger made in this session (conftest's `triggered`), as recorded."""
    (call,) = [
        c for c in call_log.calls() if c.principal == principals["trigger"].name and c.operation == "StartJobRun"
    ]
    return call.params


@contextmanager
def stop_world(deployed, role_ids, stop_role, trigger_request, removed: str | None = None) -> Iterator[StopWorld]:
    """A moto with AWS's EMR Serverless life cycle, the sink's application in it running RUNS job runs started as
    the trigger starts them, and the application stop's role (without `removed`, when given)."""
    synthesized = deployed.synthesized
    (logical_id,) = [
        k
        for k, r in synthesized.templates["service"]["Resources"].items()
        if r["Type"] == "AWS::EMRServerless::Application"
    ]
    name = _properties(deployed)["ApplicationName"]
    with lifecycle_moto(ADMIN_REQUESTS) as endpoint:
        world = IamWorld(endpoint, synthesized.settings.region)
        application = world.admin.client("emr-serverless").create_application(
            name=name, releaseLabel=synthesized.settings.emr.release_label, type="SPARK"
        )["applicationId"]
        here = Deployed.of(synthesized, {logical_id: application})
        trigger = world.role(here.role_name(role_ids["trigger"]), here.documents(role_ids["trigger"]))
        emr = trigger.credentials.client("emr-serverless")
        modes = ["BATCH"] * RUNS + ["STREAMING"]
        runs = tuple(
            emr.start_job_run(
                **{
                    **trigger_request,
                    "applicationId": application,
                    "mode": mode,
                    "clientToken": f"{trigger_request['clientToken']}-{i}",
                }
            )["jobRunId"]
            for i, mode in enumerate(modes)
        )
        documents = here.documents(stop_role)
        stop = world.role(here.role_name(stop_role), without_action(documents, removed) if removed else documents)
        yield StopWorld(world, here, application, runs, stop)


def _properties(deployed: Deployed) -> dict:
    template, physical = deployed.synthesized.templates["service"], deployed.physical["service"]
    return {
        name: custom_resource_property(template, RESOURCE_TYPE, name, physical)
        for name in ("ApplicationName", "ConfigurationHash")
    }


def _update_event(deployed: Deployed, url: str) -> dict:
    """CloudFormation's Update of the resource: the properties the function reads (and the hash) as the template
    sets them, the old ones with another configuration hash (what makes CloudFormation send the Update)."""
    (logical_id,) = [
        k for k, r in deployed.synthesized.templates["service"]["Resources"].items() if r["Type"] == RESOURCE_TYPE
    ]
    properties = {"ServiceToken": "arn:aws:lambda:eu-west-1:123456789012:function:app-stop", **_properties(deployed)}
    event = custom_resource_event(
        "Update",
        url,
        properties,
        RESOURCE_TYPE,
        request_id="update-1",
        logical_id=logical_id,
        physical_id=f"sink-application-stop-{properties['ApplicationName']}",
    )
    return {**event, "OldResourceProperties": {**properties, "ConfigurationHash": "0" * 64}}


def _delete_event(deployed: Deployed, url: str) -> dict:
    """CloudFormation's Delete of the stop-on-delete resource (its ApplicationId resolved to this moto's id)."""
    template, physical = deployed.synthesized.templates["service"], deployed.physical["service"]
    (logical_id,) = [k for k, r in template["Resources"].items() if r["Type"] == RESOURCE_TYPE_ON_DELETE]
    application = custom_resource_property(template, RESOURCE_TYPE_ON_DELETE, "ApplicationId", physical)
    properties = {
        "ServiceToken": "arn:aws:lambda:eu-west-1:123456789012:function:app-stop",
        "ApplicationId": application,
    }
    return custom_resource_event(
        "Delete",
        url,
        properties,
        RESOURCE_TYPE_ON_DELETE,
        request_id="delete-1",
        logical_id=logical_id,
        physical_id=f"sink-application-stop-on-delete-{application}",
    )


def _update(here: StopWorld, url: str, log: CallLog | None, event=_update_event) -> dict:
    from lambdas.app_stop import handler as module

    with as_function(here.deployed, here.stop, APP_STOP, log) as handler, pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "ApplicationStopper", functools.partial(ApplicationStopper, poll_seconds=POLL_SECONDS))
        return handler(event(here.deployed, url), TimedContext())


@pytest.fixture(scope="module")
def stop_log(tmp_path_factory) -> CallLog:
    return CallLog(tmp_path_factory.mktemp("iam-app-stop-calls") / "calls.jsonl")


@dataclass(frozen=True)
class Stopped:
    world: StopWorld
    before: dict[str, str]
    after: dict[str, str]
    graces: dict[str, int | None]
    arns: dict[str, str]
    answer: dict
    response: dict
    needs: list


@pytest.fixture(scope="module")
def stopped(deployed, role_ids, stop_role, trigger_request, cloudformation, stop_log) -> Stopped:
    url, responses = cloudformation
    with stop_world(deployed, role_ids, stop_role, trigger_request) as here:
        before = here.states()
        answer = _update(here, url, stop_log)
        found = [n for c in stop_log.calls() if c.principal == here.stop.name for n in needs(c, here.deployed.facts())]
        return Stopped(here, before, here.states(), here.graces(), here.arns(), answer, responses[-1], found)


def test_the_update_cancels_the_runs_and_stops_the_application_as_its_role(stopped):
    # (the STREAMING run is seen only by a listing that names its mode: emr_lifecycle lists BATCH runs without one)
    here = stopped.world
    # given the application STARTED by the runs the trigger started, which are not over
    assert stopped.before[here.application] in ("STARTING", "STARTED")
    assert all(stopped.before[r] in ("SUBMITTED", "PENDING", "SCHEDULED", "RUNNING") for r in here.runs)
    # then (the Update handled as the function's role) the runs are cancelled and the application stopped
    assert stopped.answer == {"status": "SUCCESS", "cancelled_runs": {here.application: list(here.runs)}}
    assert {k: stopped.after[k] for k in (here.application, *here.runs)} == {
        here.application: "STOPPED",
        **{r: "CANCELLED" for r in here.runs},
    }
    # and CloudFormation hears SUCCESS for the resource
    assert (stopped.response["Status"], stopped.response["RequestId"], stopped.response["Data"]) == (
        "SUCCESS",
        "update-1",
        {"Applications": 1},
    )


def test_every_call_is_granted_by_the_roles_documents_on_the_services_arns(stopped):
    here = stopped.world
    assert stopped.needs
    assert sorted({str(n) for n in stopped.needs if not allows(here.stop.documents, n)}) == []
    by_action = {}
    for n in stopped.needs:
        by_action.setdefault(n.action, set()).add(n.resource)
    application_arn, run_arns = stopped.arns[here.application], {stopped.arns[r] for r in here.runs}
    assert APPLICATION_ARN.fullmatch(application_arn)["application"] == here.application
    assert {JOB_RUN_ARN.fullmatch(a)["run"] for a in run_arns} == set(here.runs)
    assert by_action == {
        "emr-serverless:ListApplications": {"*"},
        "emr-serverless:GetApplication": {application_arn},
        "emr-serverless:ListJobRuns": {application_arn},
        "emr-serverless:CancelJobRun": run_arns,
        "emr-serverless:StopApplication": {application_arn},
    }


def test_each_listing_names_its_mode_and_the_streaming_run_gets_its_grace_period(stopped, deployed):
    here = stopped.world
    listings = [n.call.params.get("mode") for n in stopped.needs if n.call.operation == "ListJobRuns"]
    assert listings and set(listings) == {"BATCH", "STREAMING"}
    environment = function_environment(
        deployed.synthesized.templates["service"], APP_STOP, deployed.physical["service"]
    )
    grace = environment.get("STREAMING_GRACE_SECONDS")
    assert [stopped.graces[r] for r in here.runs] == [None] * RUNS + [None if grace is None else int(grace)]


def test_the_stop_waits_for_the_cancelled_runs_to_end_and_is_asked_once(stopped):
    # AWS refuses StopApplication while a run is not over (and the function would ask again): asked once, it was
    # asked after the runs had ended; then the application is looked at until it is no longer STOPPING (one look
    # sees STOPPING, the next STOPPED: emr_lifecycle's looks)
    operations = [n.call.operation for n in stopped.needs]
    assert operations.count("StopApplication") == 1
    assert operations.count("CancelJobRun") == RUNS + 1
    stop = operations.index("StopApplication")
    assert stop > max(i for i, o in enumerate(operations) if o == "CancelJobRun")
    assert operations[stop + 1 :] == ["GetApplication", "GetApplication"]


def test_the_role_grants_the_function_nothing_it_does_not_call(stopped):
    here = stopped.world
    granted = {
        a
        for d in here.stop.documents
        for s in d.statements
        if s["Effect"] == "Allow"
        for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        if not a.startswith(RUNTIME_SERVICES)
    }
    assert granted == {n.action for n in stopped.needs}


@pytest.mark.parametrize(
    "action",
    [
        "emr-serverless:ListApplications",
        "emr-serverless:GetApplication",
        "emr-serverless:ListJobRuns",
        "emr-serverless:CancelJobRun",
        "emr-serverless:StopApplication",
    ],
)
def test_without_a_grant_the_update_fails_and_cloudformation_hears_the_refused_call(
    action, deployed, role_ids, stop_role, trigger_request, cloudformation
):
    # given the role without `action` (every statement granting it loses it)
    url, responses = cloudformation
    operation = action.split(":")[1]
    heard = len(responses)
    with stop_world(deployed, role_ids, stop_role, trigger_request, removed=action) as here:
        # when CloudFormation updates the resource
        answer = _update(here, url, None)
        after = here.states()
    # then the function fails and CloudFormation hears FAILED, once, naming the refused call
    assert answer["status"] == "FAILED", answer
    (response,) = responses[heard:]
    assert response["Status"] == "FAILED"
    assert "AccessDenied" in response["Reason"] and operation in response["Reason"], response["Reason"]
    assert after[here.application] != "STOPPED"


def test_the_delete_stops_the_running_application_so_that_cloudformation_can_delete_it(
    deployed, role_ids, stop_role, trigger_request, cloudformation
):
    # given the application STARTED by runs the trigger started, which are not over: DeleteApplication, as
    # CloudFormation sends it, is refused ("An application has to be in a stopped or created state in order to be
    # deleted", EMR Serverless API Reference, DeleteApplication): the stack would end DELETE_FAILED
    url, responses = cloudformation
    with stop_world(deployed, role_ids, stop_role, trigger_request) as here:
        emr = here.world.admin.client("emr-serverless")
        with pytest.raises(emr.exceptions.ValidationException):
            emr.delete_application(applicationId=here.application)
        # when CloudFormation deletes the stop-on-delete resource first (it depends on the application), handled by
        # the function as its role
        answer = _update(here, url, None, event=_delete_event)
        after = here.states()
        # then the runs are cancelled, the application is STOPPED and CloudFormation's DeleteApplication succeeds
        emr.delete_application(applicationId=here.application)
        deleted = here.states()[here.application]
    assert answer == {"status": "SUCCESS", "cancelled_runs": {here.application: list(here.runs)}}
    assert {k: after[k] for k in (here.application, *here.runs)} == {
        here.application: "STOPPED",
        **{r: "CANCELLED" for r in here.runs},
    }
    assert deleted == "TERMINATED"
    assert (responses[-1]["Status"], responses[-1]["RequestId"]) == ("SUCCESS", "delete-1")
