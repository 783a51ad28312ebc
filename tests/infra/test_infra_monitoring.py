"""Alarms that can fire: failed job runs from EMR Serverless's EventBridge events, broken MSK event source
mappings, admin failures, lag and DLQ growth, all to the encrypted alarm topic."""

import json

from aws_cdk.assertions import Match

from infra.constructs.monitoring import FAILED_STATES, JOB_RUN_STATE_CHANGE, UNHEALTHY_TICKS
from lambdas.trigger.esm_health import METRIC as UNHEALTHY_MAPPINGS
from lambdas.trigger.runs import QUEUED_METRIC
from sink_engine.run.metrics import DIMENSION as RUN_DIMENSION
from sink_engine.run.metrics import METRICS as RUN_METRICS
from sink_engine.run.metrics import NAMESPACE as RUN_NAMESPACE


def _only(resources: dict) -> dict:
    (resource,) = resources.values()
    return resource["Properties"]


def _alarms(template) -> dict[str, dict]:
    """Alarms by metric name."""
    return {
        a["Properties"]["MetricName"]: a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
    }


def _logical_id(template, kind: str, prefix: str) -> str:
    (found,) = [k for k in template.find_resources(kind) if k.startswith(prefix)]
    return found


def test_failed_and_cancelled_runs_of_the_application_are_published_to_the_topic(each_env):
    template = each_env.template("service")
    application = _logical_id(template, "AWS::EMRServerless::Application", "JobApplication")
    topic = _logical_id(template, "AWS::SNS::Topic", "MonitoringAlarms")
    rule = _only(template.find_resources("AWS::Events::Rule", {"Properties": {"EventPattern": Match.any_value()}}))
    assert rule["EventPattern"] == {
        "source": ["aws.emr-serverless"],
        "detail-type": [JOB_RUN_STATE_CHANGE],
        "detail": {"applicationId": [{"Fn::GetAtt": [application, "ApplicationId"]}], "state": list(FAILED_STATES)},
    }
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Ref": topic}
    assert target["InputTransformer"]["InputPathsMap"]["detail-jobRunId"] == "$.detail.jobRunId"
    assert "get-job-run" in target["InputTransformer"]["InputTemplate"]


def test_eventbridge_may_publish_to_the_encrypted_topic(each_env):
    template = each_env.template("service")
    topic = _logical_id(template, "AWS::SNS::Topic", "MonitoringAlarms")
    key = _logical_id(template, "AWS::KMS::Key", "MonitoringTopicKey")
    assert _only(template.find_resources("AWS::SNS::Topic"))["KmsMasterKeyId"] == {"Fn::GetAtt": [key, "Arn"]}
    key_statements = template.find_resources("AWS::KMS::Key")[key]["Properties"]["KeyPolicy"]["Statement"]
    assert any(
        "events.amazonaws.com" in json.dumps(s["Principal"])
        and {"kms:Decrypt", "kms:GenerateDataKey*"} <= set(s["Action"])
        for s in key_statements
    )
    topic_policy = _only(template.find_resources("AWS::SNS::TopicPolicy"))
    assert topic_policy["Topics"] == [{"Ref": topic}]
    assert any(
        s["Effect"] == "Allow"
        and s["Principal"] == {"Service": "events.amazonaws.com"}
        and s["Action"] == "sns:Publish"
        for s in topic_policy["PolicyDocument"]["Statement"]
    )


def test_no_alarm_watches_the_job_metrics_aws_stopped_updating(each_env):
    alarms = each_env.template("service").find_resources("AWS::CloudWatch::Alarm").values()
    assert not [a for a in alarms if a["Properties"]["Namespace"] == "AWS/EMRServerless"]


def test_failed_runs_alarm_counts_the_rule_and_undelivered_notifications_notify(each_env):
    template = each_env.template("service")
    rule = _logical_id(template, "AWS::Events::Rule", "MonitoringJobRunFailed")
    alarms = _alarms(template)
    for metric in ("TriggeredRules", "FailedInvocations"):
        assert alarms[metric]["Namespace"] == "AWS/Events"
        assert alarms[metric]["Dimensions"] == [{"Name": "RuleName", "Value": {"Ref": rule}}]
    assert "AlarmActions" not in alarms["TriggeredRules"]  # the rule itself notifies each run
    assert alarms["FailedInvocations"]["AlarmActions"]


def test_broken_event_source_mappings_raise_an_alarm_after_several_checks(each_env):
    template = each_env.template("service")
    alarm = _alarms(template)[UNHEALTHY_MAPPINGS]
    assert alarm["Namespace"] == "SinkEngine" and alarm["Dimensions"] == [{"Name": "service", "Value": "sink-trigger"}]
    assert alarm["Period"] == 60 * max(5, each_env.deployment.settings.trigger.idle_flush_minutes)
    assert alarm["EvaluationPeriods"] == UNHEALTHY_TICKS and alarm["Threshold"] == 1 and alarm["AlarmActions"]
    trigger_role = _logical_id(template, "AWS::IAM::Role", "TriggerLambdaFunctionServiceRole")
    policy = _only(
        template.find_resources(
            "AWS::IAM::Policy",
            {
                "Properties": {
                    "Roles": [{"Ref": trigger_role}],
                    "PolicyDocument": {"Statement": [Match.object_like({"Action": "lambda:ListEventSourceMappings"})]},
                }
            },
        )
    )
    assert policy["PolicyDocument"]["Statement"][0]["Resource"] == "*"


def test_a_run_the_trigger_sees_queued_raises_an_alarm(each_env):
    # a QUEUED run waits for a slot of the application's MaxConcurrentRuns, for up to its queue timeout (6 hours by
    # default), and its connector starts nothing meanwhile: the trigger counts what it sees, the alarm notifies
    alarm = _alarms(each_env.template("service"))[QUEUED_METRIC]
    assert (alarm["Namespace"], alarm["Dimensions"]) == ("SinkEngine", [{"Name": "service", "Value": "sink-trigger"}])
    assert (alarm["Statistic"], alarm["Threshold"], alarm["EvaluationPeriods"]) == ("Sum", 1, 1)
    assert alarm["AlarmActions"] and alarm["TreatMissingData"] == "notBreaching"


def test_admin_reconcile_failures_and_errors_raise_alarms(each_env):
    template = each_env.template("service")
    alarms = _alarms(template)
    assert alarms["ReconcileFailures"]["Namespace"] == "SinkEngine"
    assert alarms["ReconcileFailures"]["Dimensions"] == [{"Name": "service", "Value": "sink-admin"}]
    admin = _logical_id(template, "AWS::Lambda::Function", "AdminLambdaFunction")
    errors = [
        a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"]["MetricName"] == "Errors"
    ]
    assert {"Name": "FunctionName", "Value": {"Ref": admin}} in [d for a in errors for d in a["Dimensions"]]


def test_lag_and_dlq_alarms_notify_per_connector(each_env):
    template = each_env.template("service")
    alarms = template.find_resources("AWS::CloudWatch::Alarm").values()
    metrics = {(a["Properties"]["Namespace"], a["Properties"]["MetricName"]) for a in alarms}
    assert ("AWS/S3", "PutRequests") in metrics
    for name in ("PendingRecords", "OldestPendingAgeSeconds"):
        connectors = {
            d["Value"]
            for a in alarms
            if a["Properties"]["MetricName"] == name
            for d in a["Properties"]["Dimensions"]
            if d["Name"] == "Connector"
        }
        assert connectors == {c.name for c in each_env.deployment.connectors}
    assert all(a["Properties"].get("AlarmActions") for a in alarms if a["Properties"]["MetricName"] != "TriggeredRules")


def test_dashboard_shows_every_alarm_and_job_runs_by_state(each_env):
    template = each_env.template("service")
    body = json.dumps(_only(template.find_resources("AWS::CloudWatch::Dashboard"))["DashboardBody"])
    for alarm in template.find_resources("AWS::CloudWatch::Alarm"):
        assert alarm in body
    for state in ("Running", "Success", "Failed", "Cancelled"):
        assert f"{state}Jobs" in body
    assert "{AWS/EMRServerless,ApplicationId,ApplicationName}" in body  # emr-7.12.0 publishes these dimensions


def _dashboard_widgets(template) -> list[dict]:
    """The dashboard's widgets, its body's tokens (ARNs, names) read as the text TOKEN."""
    body = _only(template.find_resources("AWS::CloudWatch::Dashboard"))["DashboardBody"]
    separator, parts = body["Fn::Join"]
    return json.loads(separator.join(p if isinstance(p, str) else "TOKEN" for p in parts))["widgets"]


def test_dashboard_graphs_each_connectors_run_metrics_with_their_statistics(each_env):
    # given the synthesized dashboard
    widgets = _dashboard_widgets(each_env.template("service"))
    # then every metric a job run publishes is graphed for every connector (one SEARCH over the run metrics'
    # namespace and dimension), summed for counts and at its largest for the run's duration and lag
    searches = [
        metric[0]["expression"]
        for widget in widgets
        for metric in widget["properties"].get("metrics", [])
        if isinstance(metric[0], dict) and "expression" in metric[0]
    ]
    for name in RUN_METRICS:
        statistic = "Maximum" if name in ("RunSeconds", "Lag", "Executors", "TasksInDriver") else "Sum"
        assert f"SEARCH('{{{RUN_NAMESPACE},{RUN_DIMENSION}}} MetricName=\"{name}\"', '{statistic}', 300)" in searches
    # and no widget lists a metric per connector (CloudWatch takes 500 metrics per widget)
    assert all(len(widget["properties"].get("metrics", [])) <= 6 for widget in widgets)
