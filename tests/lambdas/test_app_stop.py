"""The application stop: a custom resource that, on Update, cancels the EMR Serverless application's active runs
and stops it, so CloudFormation's UpdateApplication that follows finds it STOPPED; and one that does so on Delete,
so that DeleteApplication finds it STOPPED.

moto has the calls (ListApplications, GetApplication, StopApplication, ListJobRuns, CancelJobRun) but not the
life cycle (docs/aws-fidelity.md): its applications are STARTED from creation, its runs SUCCESS at once, and
StopApplication succeeds in
any state. The waits (runs CANCELLING, the application STOPPING, a run started meanwhile) are driven with
botocore's Stubber, answering as the API Reference describes."""

from __future__ import annotations

from dataclasses import dataclass

import boto3
import pytest
from botocore.stub import Stubber

from lambdas.app_stop import handler as app_stop
from lambdas.app_stop.service import ACTIVE_RUN_STATES, RUN_MODES, ApplicationStopper, StopTimeout
from tests.cloudformation import custom_resource_event, response_endpoint
from tests.lambdas.conftest import LambdaContext

NAME = "sink-dev"
APP = "00fborfm8ne0ie09"  # ids and ARNs as the API's shapes want them
ARN = f"arn:aws:emr-serverless:eu-west-1:111111111111:/applications/{APP}"
RUN1, RUN2, RUN3 = "00fbrun1000000a1", "00fbrun2000000a2", "00fbrun3000000a3"
RESOURCE_TYPE = "Custom::SinkApplicationStop"
ON_DELETE = "Custom::SinkApplicationStopOnDelete"


@dataclass
class TimedContext(LambdaContext):
    remaining_ms: int = 120_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


@pytest.fixture
def cloudformation():
    with response_endpoint() as endpoint:
        yield endpoint


def _event(kind: str, url: str) -> dict:
    return custom_resource_event(
        kind,
        url,
        {"ServiceToken": "arn", "ApplicationName": NAME, "ConfigurationHash": "h"},
        RESOURCE_TYPE,
        logical_id="ApplicationStop",
        physical_id=None if kind == "Create" else f"sink-application-stop-{NAME}",
    )


def _on_delete_event(kind: str, url: str, application_id: str) -> dict:
    return custom_resource_event(
        kind,
        url,
        {"ServiceToken": "arn", "ApplicationId": application_id},
        ON_DELETE,
        logical_id="ApplicationStopBeforeDelete",
        physical_id=None if kind == "Create" else f"stop-on-delete-{application_id}",
    )


def _application(emr, name: str = NAME) -> str:
    """An application that ran the job once (moto's ListJobRuns answers ResourceNotFound for one that never ran;
    its run is SUCCESS at once)."""
    application = emr.create_application(name=name, releaseLabel="emr-7.12.0", type="SPARK")["applicationId"]
    emr.start_job_run(
        applicationId=application,
        clientToken="t",
        executionRoleArn="arn:aws:iam::123456789012:role/r",
        jobDriver={"sparkSubmit": {"entryPoint": "s3://b/entrypoint.py"}},
    )
    return application


def _state(emr, application_id: str) -> str:
    return emr.get_application(applicationId=application_id)["application"]["state"]


def test_update_stops_the_started_application_of_that_name_only(aws, cloudformation, context):
    # given the sink's application STARTED (moto starts it at creation) and another application
    url, responses = cloudformation
    emr = boto3.client("emr-serverless")
    mine, other = _application(emr), _application(emr, "someone-else")
    # when CloudFormation updates the resource
    result = app_stop.handler(_event("Update", url), TimedContext())
    # then the sink's application is stopped, the other not, and CloudFormation hears SUCCESS
    assert result == {"status": "SUCCESS", "cancelled_runs": {mine: []}}
    assert (_state(emr, mine), _state(emr, other)) == ("STOPPED", "STARTED")
    assert [r["Status"] for r in responses] == ["SUCCESS"]


@pytest.mark.parametrize("kind", ["Create", "Delete"])
def test_create_and_delete_leave_the_application_alone(aws, cloudformation, kind):
    # the application is created after the resource and deleted before it
    url, responses = cloudformation
    emr = boto3.client("emr-serverless")
    mine = _application(emr)
    assert app_stop.handler(_event(kind, url), TimedContext())["status"] == "SUCCESS"
    assert _state(emr, mine) == "STARTED" and [r["Status"] for r in responses] == ["SUCCESS"]


def test_delete_of_the_stop_on_delete_resource_stops_its_application_which_can_then_be_deleted(aws, cloudformation):
    # given the sink's application STARTED, which DeleteApplication refuses (AWS, and moto: CREATED or STOPPED only)
    url, responses = cloudformation
    emr = boto3.client("emr-serverless")
    mine, other = _application(emr), _application(emr, "someone-else")
    with pytest.raises(emr.exceptions.ValidationException):
        emr.delete_application(applicationId=mine)
    # when CloudFormation deletes the resource that depends on the application (before the application)
    result = app_stop.handler(_on_delete_event("Delete", url, mine), TimedContext())
    # then the application is stopped, the other one not, and CloudFormation's DeleteApplication then succeeds
    assert result == {"status": "SUCCESS", "cancelled_runs": {mine: []}}
    assert (_state(emr, mine), _state(emr, other)) == ("STOPPED", "STARTED")
    emr.delete_application(applicationId=mine)
    assert [r["Status"] for r in responses] == ["SUCCESS"]


@pytest.mark.parametrize("kind", ["Create", "Update"])
def test_create_and_update_of_the_stop_on_delete_resource_leave_the_application_alone(aws, cloudformation, kind):
    url, responses = cloudformation
    emr = boto3.client("emr-serverless")
    mine = _application(emr)
    assert app_stop.handler(_on_delete_event(kind, url, mine), TimedContext())["cancelled_runs"] == {}
    assert _state(emr, mine) == "STARTED" and [r["Status"] for r in responses] == ["SUCCESS"]


def test_a_delete_finds_the_application_already_gone_and_succeeds(aws, cloudformation):
    # deleted by hand: nothing to stop, and a failed Delete would keep the stack from being deleted
    url, responses = cloudformation
    emr = boto3.client("emr-serverless")
    mine = _application(emr)
    emr.stop_application(applicationId=mine)
    emr.delete_application(applicationId=mine)
    gone = "00fbgone00000000"
    for application in (mine, gone):  # TERMINATED, then unknown
        assert app_stop.handler(_on_delete_event("Delete", url, application), TimedContext())["status"] == "SUCCESS"
    assert [r["Status"] for r in responses] == ["SUCCESS", "SUCCESS"]


def test_an_application_already_stopped_is_not_stopped_again(aws, cloudformation):
    url, responses = cloudformation
    emr = boto3.client("emr-serverless")
    mine = _application(emr)
    emr.stop_application(applicationId=mine)
    assert app_stop.handler(_event("Update", url), TimedContext())["cancelled_runs"] == {}
    assert [r["Status"] for r in responses] == ["SUCCESS"]


def test_a_failure_reaches_cloudformation(aws, cloudformation, monkeypatch):
    url, responses = cloudformation
    _application(boto3.client("emr-serverless"))

    def refuse(self, application_id, deadline):
        raise StopTimeout("application is STOPPING, not stopped, at the deadline")

    monkeypatch.setattr(ApplicationStopper, "stop", refuse)
    assert app_stop.handler(_event("Update", url), TimedContext())["status"] == "FAILED"
    assert responses[0]["Status"] == "FAILED" and "StopTimeout" in responses[0]["Reason"]


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _stubbed():
    emr = boto3.client("emr-serverless", region_name="eu-west-1", aws_access_key_id="t", aws_secret_access_key="t")
    return emr, Stubber(emr)


def _get(stub, state):
    stub.add_response(
        "get_application",
        {
            "application": {
                "applicationId": APP,
                "arn": ARN,
                "releaseLabel": "emr-7.12.0",
                "type": "SPARK",
                "state": state,
                "createdAt": 0,
                "updatedAt": 0,
            }
        },
        {"applicationId": APP},
    )


def _runs(stub, *runs):
    """ListJobRuns' answers, one per mode listed by name (BATCH, then STREAMING): (id, state) or (id, state, mode)
    per run, each in its mode's listing."""
    for mode in RUN_MODES:
        stub.add_response(
            "list_job_runs",
            {
                "jobRuns": [
                    {
                        "applicationId": APP,
                        "id": run[0],
                        "arn": f"{ARN}/jobruns/{run[0]}",
                        "createdBy": "arn:aws:iam::111111111111:role/trigger",
                        "createdAt": 0,
                        "updatedAt": 0,
                        "executionRole": "arn:aws:iam::111111111111:role/job",
                        "state": run[1],
                        "stateDetails": run[1],
                        "releaseLabel": "emr-7.12.0",
                        "mode": mode,
                    }
                    for run in runs
                    if (run + ("BATCH",))[2] == mode
                ]
            },
            {"applicationId": APP, "states": ACTIVE_RUN_STATES, "mode": mode},
        )


def test_active_runs_are_cancelled_and_ended_before_the_stop_and_the_stop_is_awaited():
    # given a STARTED application with a RUNNING run; while it is cancelled the trigger starts another
    emr, stub = _stubbed()
    _get(stub, "STARTED")
    _runs(stub, (RUN1, "RUNNING"))
    stub.add_response(
        "cancel_job_run", {"applicationId": APP, "jobRunId": RUN1}, {"applicationId": APP, "jobRunId": RUN1}
    )
    _get(stub, "STARTED")
    _runs(stub, (RUN1, "CANCELLING"), (RUN2, "SUBMITTED"))
    stub.add_response(
        "cancel_job_run", {"applicationId": APP, "jobRunId": RUN2}, {"applicationId": APP, "jobRunId": RUN2}
    )
    _get(stub, "STARTED")
    _runs(stub)
    stub.add_response("stop_application", {}, {"applicationId": APP})
    _get(stub, "STOPPING")
    _get(stub, "STOPPED")
    clock = _Clock()
    # when stopped
    with stub:
        cancelled = ApplicationStopper(emr, clock, clock.sleep, poll_seconds=5).stop(APP, deadline=600)
        stub.assert_no_pending_responses()
    # then both runs were cancelled (never one twice), the stop sent once none was active, and STOPPED awaited
    assert cancelled == [RUN1, RUN2] and clock.now == 20


def test_a_stop_refused_because_a_run_just_started_is_tried_again():
    emr, stub = _stubbed()
    _get(stub, "STARTED")
    _runs(stub)
    stub.add_client_error(
        "stop_application",
        "ValidationException",
        "Application has running jobs",
        expected_params={"applicationId": APP},
    )
    _get(stub, "STARTED")
    _runs(stub, (RUN3, "PENDING"))
    stub.add_response(
        "cancel_job_run", {"applicationId": APP, "jobRunId": RUN3}, {"applicationId": APP, "jobRunId": RUN3}
    )
    _get(stub, "STOPPED")
    clock = _Clock()
    with stub:
        assert ApplicationStopper(emr, clock, clock.sleep, poll_seconds=5).stop(APP, deadline=600) == [RUN3]
        stub.assert_no_pending_responses()


def test_a_continuous_connectors_streaming_run_is_cancelled_with_its_grace_period():
    # given a bounded run and a continuous connector's STREAMING run
    emr, stub = _stubbed()
    _get(stub, "STARTED")
    _runs(stub, (RUN1, "RUNNING"), (RUN2, "RUNNING", "STREAMING"))
    stub.add_response(
        "cancel_job_run", {"applicationId": APP, "jobRunId": RUN1}, {"applicationId": APP, "jobRunId": RUN1}
    )
    stub.add_response(
        "cancel_job_run",
        {"applicationId": APP, "jobRunId": RUN2},
        {"applicationId": APP, "jobRunId": RUN2, "shutdownGracePeriodInSeconds": 150},
    )
    _get(stub, "STOPPED")
    clock = _Clock()
    # when stopped: the STREAMING run gets the grace period (it commits and releases its lease), the other none
    with stub:
        stopper = ApplicationStopper(emr, clock, clock.sleep, poll_seconds=5, streaming_grace_seconds=150)
        assert stopper.stop(APP, deadline=600) == [RUN1, RUN2]
        stub.assert_no_pending_responses()


def test_a_streaming_run_alone_is_listed_by_its_mode_and_cancelled_before_the_stop():
    # given the application's only active run is a continuous connector's STREAMING run (a listing without `mode`
    # may leave it out: each mode is asked by name, the Stubber checks the requests)
    emr, stub = _stubbed()
    _get(stub, "STARTED")
    _runs(stub, (RUN2, "RUNNING", "STREAMING"))
    stub.add_response(
        "cancel_job_run",
        {"applicationId": APP, "jobRunId": RUN2},
        {"applicationId": APP, "jobRunId": RUN2, "shutdownGracePeriodInSeconds": 150},
    )
    _get(stub, "STARTED")
    _runs(stub, (RUN2, "CANCELLING", "STREAMING"))
    _get(stub, "STARTED")
    _runs(stub)
    stub.add_response("stop_application", {}, {"applicationId": APP})
    _get(stub, "STOPPED")
    clock = _Clock()
    # when stopped: the run is cancelled with its grace period and ended before StopApplication is asked
    with stub:
        stopper = ApplicationStopper(emr, clock, clock.sleep, poll_seconds=5, streaming_grace_seconds=150)
        assert stopper.stop(APP, deadline=600) == [RUN2]
        stub.assert_no_pending_responses()


def test_an_application_that_does_not_stop_by_the_deadline_fails_the_update():
    emr, stub = _stubbed()
    for _ in range(3):
        _get(stub, "STOPPING")
    clock = _Clock()
    with stub, pytest.raises(StopTimeout, match=f"{APP} is STOPPING, not stopped"):
        ApplicationStopper(emr, clock, clock.sleep, poll_seconds=5).stop(APP, deadline=12)
