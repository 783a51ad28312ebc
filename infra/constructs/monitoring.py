"""Alarms and notifications to an encrypted SNS topic, and a dashboard: failed job runs (EventBridge), queued job
runs (the trigger), lag, DLQ growth, broken MSK event source mappings, trigger, admin and replay failures, each
connector's run metrics (what its job runs wrote and left, sink_engine/run/metrics.py), and each continuous
connector's freshness (its job's per-minute stream metrics)."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.constructs.admin import SERVICE as ADMIN_SERVICE
from infra.constructs.alarm_topic import AlarmTopic
from infra.constructs.data_lake import DLQ_METRICS_ID
from infra.constructs.lambda_function import execution_role
from infra.constructs.nag import acknowledge
from infra.constructs.trigger import SERVICE as TRIGGER_SERVICE
from infra.settings import Settings
from infra.stacks.connectors import ConnectorStacks
from lambdas.trigger.esm_health import METRIC as UNHEALTHY_MAPPINGS
from lambdas.trigger.runs import QUEUED_METRIC
from sink_engine.run.metrics import DIMENSION as RUN_DIMENSION
from sink_engine.run.metrics import NAMESPACE  # the trigger's and admin's Powertools metrics share it

FIVE_MINUTES = Duration.minutes(5)
ONE_MINUTE = Duration.minutes(1)
# A continuous job publishes these every minute (namespace SinkEngine, dimension Connector): the age in seconds of the
# oldest record it read but has not in S3 yet (0 when none), records written, records behind the high watermark.
FRESHNESS_METRIC = "StreamFreshnessSeconds"
STREAM_WIDGETS = (
    ("Stream freshness (s): oldest record read, not yet in S3", [(FRESHNESS_METRIC, "Maximum")]),
    ("Stream records written", [("StreamRecordsWritten", "Sum")]),
    ("Stream lag (records behind the high watermark)", [("StreamLag", "Sum")]),
)
# minutes of freshness over its setting in a row that raise a continuous connector's Freshness- alarm
FRESHNESS_MINUTES = 3
# A job run that ends in one of these states is reported, one notification per run.
FAILED_STATES = ("FAILED", "CANCELLED")
JOB_RUN_STATE_CHANGE = "EMR Serverless Job Run State Change"
# From this release on, EMR Serverless publishes its job counters with ApplicationId and ApplicationName and no
# longer updates the ApplicationId-only series ("Monitoring EMR Serverless applications and jobs").
EMR_NAMED_METRICS_FROM = (7, 10)
# The event source mapping check runs on each idle-flush tick; this many unhealthy ticks in a row raise the alarm
# (a mapping is Creating or Updating for a while after a deployment).
UNHEALTHY_TICKS = 3


def connector_metric(name: str, connector: str, statistic: str = "Maximum") -> cw.Metric:
    """A metric the trigger publishes per connector (Powertools adds the `service` dimension)."""
    return cw.Metric(
        namespace=NAMESPACE,
        metric_name=name,
        statistic=statistic,
        period=FIVE_MINUTES,
        dimensions_map={"Connector": connector, "service": TRIGGER_SERVICE},
    )


# The job's run metrics on the dashboard: (title, [(metric, statistic)]), one line per connector and metric.
# Counts add up over the runs of a period; a run's duration and the lag it left are the period's largest.
RUN_WIDGETS = (
    ("Records written (job runs)", [("RecordsWritten", "Sum")]),
    ("Bytes written (job runs)", [("BytesWritten", "Sum")]),
    ("Files written (job runs)", [("FilesWritten", "Sum")]),
    ("Dead letters and records dropped by transforms", [("DeadLetters", "Sum"), ("RecordsDropped", "Sum")]),
    ("Run duration (s)", [("RunSeconds", "Maximum")]),
    ("Lag after a run (records left)", [("Lag", "Maximum")]),
    # a run whose tasks ran in its driver (TasksInDriver 1) worked without the executors it was billed for
    ("Executors of a run; tasks in the driver (1)", [("Executors", "Maximum"), ("TasksInDriver", "Maximum")]),
)


def every_connector(
    name: str, statistic: str, service: str | None = None, period: Duration = FIVE_MINUTES
) -> cw.MathExpression:
    """One line per connector of a metric with the Connector dimension (and `service`, the trigger's), found by a
    SEARCH: a dashboard widget lists one expression whatever the number of connectors, where a metric per
    connector would pass CloudWatch's 500 metrics per widget (CloudWatch service quotas) at 500 connectors."""
    schema, match = f"{{{NAMESPACE},{RUN_DIMENSION}}}", f'MetricName="{name}"'
    if service is not None:
        schema, match = f"{{{NAMESPACE},{RUN_DIMENSION},service}}", f'{match} service="{service}"'
    return cw.MathExpression(
        expression=f"SEARCH('{schema} {match}', '{statistic}', {int(period.to_seconds())})",
        using_metrics={},
        label=name,
        period=period,
    )


def stream_metric_widgets() -> list[cw.GraphWidget]:
    """STREAM_WIDGETS: the continuous jobs' per-minute metrics, every continuous connector's line (SEARCH)."""
    return [
        cw.GraphWidget(
            title=title,
            width=8,
            left=[every_connector(name, statistic, period=ONE_MINUTE) for name, statistic in lines],
        )
        for title, lines in STREAM_WIDGETS
    ]


def freshness_metric(connector: str) -> cw.Metric:
    """A continuous connector's StreamFreshnessSeconds, its largest per minute (a plain metric: an alarm's)."""
    return cw.Metric(
        namespace=NAMESPACE,
        metric_name=FRESHNESS_METRIC,
        statistic="Maximum",
        period=ONE_MINUTE,
        dimensions_map={RUN_DIMENSION: connector},
    )


def run_metric_widgets() -> list[list[cw.GraphWidget]]:
    """RUN_WIDGETS in rows of three: the metrics each job run publishes for its connector (PutMetricData,
    dimension Connector only), every connector's."""
    widgets = [
        cw.GraphWidget(title=title, width=8, left=[every_connector(name, statistic) for name, statistic in metrics])
        for title, metrics in RUN_WIDGETS
    ]
    return [widgets[i : i + 3] for i in range(0, len(widgets), 3)]


def job_run_failed_pattern(application_id: str) -> events.EventPattern:
    """EMR Serverless's job run state change events of `application_id` into one of FAILED_STATES."""
    return events.EventPattern(
        source=["aws.emr-serverless"],
        detail_type=[JOB_RUN_STATE_CHANGE],
        detail={"applicationId": [application_id], "state": list(FAILED_STATES)},
    )


def emr_jobs(state: str, release_label: str, application_id: str) -> cw.MathExpression:
    """EMR Serverless's `<state>Jobs` counter of `application_id`, found by a SEARCH over the dimensions that
    `release_label` publishes (dashboard only)."""
    major, minor = (int(part) for part in release_label.removeprefix("emr-").split(".")[:2])
    schema = "ApplicationId,ApplicationName" if (major, minor) >= EMR_NAMED_METRICS_FROM else "ApplicationId"
    query = f'{{AWS/EMRServerless,{schema}}} MetricName="{state}Jobs" ApplicationId="{application_id}"'
    return cw.MathExpression(
        expression=f"SEARCH('{query}', 'Sum', {int(FIVE_MINUTES.to_seconds())})",
        using_metrics={},
        label=state,
        period=FIVE_MINUTES,
    )


class Monitoring(Construct):
    """Props: `settings`, `connectors`, `application_id` (the EMR Serverless application's), `bucket_name`, the
    `trigger`, `replay` and `admin` functions, and `discarded` (the queue of the MSK batches the trigger's event
    sources discarded).

    Attributes: `topic` (notifications, KMS-encrypted; infra/constructs/alarm_topic.py: this account's alarms and the
    rule below may publish), `alarms` (name -> Alarm), `job_run_failed` (the EventBridge
    rule publishing each failed or cancelled run of the application to `topic`), `dashboard`.

    Each connector's alarms lie where `placement` puts its resources; the dashboard's alarm status shows those of
    the service stack (another stack's would each be a cross-stack reference).

    The trigger's role is granted lambda:ListEventSourceMappings here: its idle-flush tick publishes
    UNHEALTHY_MAPPINGS (lambdas/trigger/esm_health.py), which the `EventSourceMappings` alarm watches."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: Settings,
        connectors: tuple[ConnectorSpec, ...],
        application_id: str,
        bucket_name: str,
        trigger: lambda_.IFunction,
        replay: lambda_.IFunction,
        admin: lambda_.IFunction,
        placement: ConnectorStacks,
        discarded: sqs.IQueue | None = None,
    ):
        super().__init__(scope, id)
        self._publishers = AlarmTopic(self, env=settings.env)
        self.topic = self._publishers.topic
        if settings.alarms.email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarms.email))
        self.alarms: dict[str, cw.Alarm] = {}
        self.job_run_failed = self._job_run_rule(application_id)
        failed_runs = cw.Metric(
            namespace="AWS/Events",
            metric_name="TriggeredRules",
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={"RuleName": self.job_run_failed.rule_name},
        )
        undelivered = cw.Metric(
            namespace="AWS/Events",
            metric_name="FailedInvocations",
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={"RuleName": self.job_run_failed.rule_name},
        )
        self._alarm(
            "FailedJobRuns",
            failed_runs,
            1,
            "A sink job run failed or was cancelled; each run is notified "
            "by the JobRunFailed rule, this alarm keeps the state",
            notify=False,
        )
        self._alarm(
            "JobRunNotificationsFailed",
            undelivered,
            1,
            "EventBridge could not publish a failed job run to the alarm topic (topic or key policy)",
        )
        dlq_puts = cw.Metric(
            namespace="AWS/S3",
            metric_name="PutRequests",
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={"BucketName": bucket_name, "FilterId": DLQ_METRICS_ID},
        )
        self._alarm("DlqGrowth", dlq_puts, 1, "Records were written to the dead-letter prefix")
        self._alarm(
            "TriggerErrors",
            trigger.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "The trigger Lambda failed; MSK batches are being retried",
        )
        if discarded is not None:
            self._alarm(
                "TriggerBatchesDiscarded",
                discarded.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES, statistic="Maximum"),
                1,
                "An MSK event source discarded a batch the trigger failed on 11 times (its description is in the "
                "queue; the trigger knows the partition's offsets again from its next batch): read and delete it",
            )
        queued = cw.Metric(
            namespace=NAMESPACE,
            metric_name=QUEUED_METRIC,
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={"service": TRIGGER_SERVICE},
        )
        self._alarm(
            "QueuedJobRuns",
            queued,
            1,
            "A connector's job run waits QUEUED: the EMR application's "
            "MaxConcurrentRuns (emr.concurrent_runs) is taken, and the connector starts nothing until it runs "
            "or its queue timeout fails it (the trigger's log says which: JOB_RUN_QUEUED)",
        )
        mappings = self._mappings_alarm(settings, trigger)
        self._alarm(
            "ReplayErrors",
            replay.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "A DLQ replay invocation failed; records it claimed are reported in doubt by the next one",
        )
        admin_metrics = self._admin_alarms(admin)
        for spec in connectors:
            scope = placement.scope(self, spec.name)
            self._alarm(
                f"Lag-{spec.name}",
                connector_metric("PendingRecords", spec.name),
                settings.alarms.pending_records,
                f"Connector {spec.name} has too many records pending",
                scope=scope,
            )
            self._alarm(
                f"Age-{spec.name}",
                connector_metric("OldestPendingAgeSeconds", spec.name),
                settings.alarms.pending_age_seconds,
                f"Connector {spec.name}'s oldest pending record is too old",
                scope=scope,
            )
            if spec.continuous is not None:
                self._alarm(
                    f"Freshness-{spec.name}",
                    freshness_metric(spec.name),
                    spec.continuous.freshness_alarm_seconds,
                    f"Continuous connector {spec.name}: its oldest record read but not yet in S3 has been at least "
                    f"{spec.continuous.freshness_alarm_seconds} s old (continuous.connectors.{spec.name}."
                    f"freshness_alarm_seconds) for {FRESHNESS_MINUTES} minutes, or its job published no freshness "
                    "(it is not running: the trigger's log and the FailedJobRuns alarm say why)",
                    scope=scope,
                    evaluation_periods=FRESHNESS_MINUTES,
                    missing=cw.TreatMissingData.BREACHING,
                )
        started = [every_connector("JobRunsStarted", "Sum", TRIGGER_SERVICE)]
        by_state = [
            emr_jobs(state, settings.emr.release_label, application_id)
            for state in ("Running", "Success", "Failed", "Cancelled")
        ]
        self.dashboard = cw.Dashboard(
            self,
            "Dashboard",
            dashboard_name=f"sink-{settings.env}",
            widgets=[
                [
                    cw.AlarmStatusWidget(
                        title="Alarms",
                        width=24,
                        alarms=[a for a in self.alarms.values() if Stack.of(a) is Stack.of(self)],
                    )
                ],
                [
                    cw.GraphWidget(
                        title="Job runs: started (trigger), failed or cancelled (EventBridge)",
                        left=[
                            *started,
                            failed_runs.with_(label="failed or cancelled"),
                            undelivered.with_(label="notifications not delivered"),
                            queued.with_(label="seen queued (trigger)"),
                        ],
                        width=12,
                    ),
                    cw.GraphWidget(title="Job runs by state (EMR Serverless counters)", left=by_state, width=12),
                ],
                [
                    cw.GraphWidget(
                        title="Pending records",
                        left=[every_connector("PendingRecords", "Maximum", TRIGGER_SERVICE)],
                        width=12,
                    ),
                    cw.GraphWidget(
                        title="Oldest pending (s)",
                        left=[every_connector("OldestPendingAgeSeconds", "Maximum", TRIGGER_SERVICE)],
                        width=12,
                    ),
                ],
                [
                    cw.GraphWidget(
                        title="Trigger",
                        left=[trigger.metric_invocations(), trigger.metric_errors()],
                        right=[trigger.metric_duration()],
                        width=12,
                    ),
                    cw.GraphWidget(title="Unhealthy MSK event source mappings", left=[mappings], width=12),
                ],
                [
                    cw.GraphWidget(title="DLQ puts", left=[dlq_puts], width=8),
                    cw.GraphWidget(title="Admin", left=admin_metrics, width=8),
                    cw.GraphWidget(
                        title="DLQ replay", left=[replay.metric_invocations(), replay.metric_errors()], width=8
                    ),
                ],
                *run_metric_widgets(),
                *([stream_metric_widgets()] if any(c.continuous for c in connectors) else []),
            ],
        )

    def _job_run_rule(self, application_id: str) -> events.Rule:
        """One message per failed or cancelled run: which run, its states, and how to read why."""
        field = events.EventField.from_path
        run, app = field("$.detail.jobRunId"), field("$.detail.applicationId")
        message = events.RuleTargetInput.from_text(
            f"Sink job run {run} of EMR Serverless application {app} is {field('$.detail.state')} "
            f"(was {field('$.detail.previousState')}) at {field('$.time')}. Why: aws emr-serverless get-job-run "
            f"--application-id {app} --job-run-id {run} (stateDetails), and the job's log group."
        )
        rule = events.Rule(
            self,
            "JobRunFailed",
            event_pattern=job_run_failed_pattern(application_id),
            description="Notify each failed or cancelled sink job run",
        )
        self._publishers.publish_rule(rule, message)
        return rule

    def _admin_alarms(self, admin: lambda_.IFunction) -> list[cw.Metric]:
        """Alarms on the admin's reconcile failures (custom resource) and errors (daily or direct runs)."""
        failures = cw.Metric(
            namespace=NAMESPACE,
            metric_name="ReconcileFailures",
            statistic="Sum",
            period=FIVE_MINUTES,
            dimensions_map={"service": ADMIN_SERVICE},
        )
        errors = admin.metric_errors(period=FIVE_MINUTES, statistic="Sum")
        self._alarm(
            "ReconcileFailures",
            failures,
            1,
            "The admin custom resource failed to reconcile the connectors (the deployment failed)",
        )
        self._alarm("AdminErrors", errors, 1, "The admin Lambda failed (a daily reconcile or a direct plan/apply)")
        return [failures, errors]

    def _mappings_alarm(self, settings: Settings, trigger: lambda_.IFunction) -> cw.Metric:
        """Grant the trigger the mapping check and alarm on its result; returns the metric."""
        policy = iam.Policy(
            self,
            "TriggerReadsItsMappings",
            roles=[execution_role(trigger)],
            statements=[iam.PolicyStatement(actions=["lambda:ListEventSourceMappings"], resources=["*"])],
        )
        acknowledge(
            policy,
            "IAM5[Resource::*]",
            "lambda:ListEventSourceMappings has no resource-level permissions; "
            "the trigger lists its own mappings (FunctionName filter) to report their health.",
        )
        tick = Duration.minutes(max(5, settings.trigger.idle_flush_minutes))
        metric = cw.Metric(
            namespace=NAMESPACE,
            metric_name=UNHEALTHY_MAPPINGS,
            statistic="Maximum",
            period=tick,
            dimensions_map={"service": TRIGGER_SERVICE},
        )
        ticks = max(1, min(UNHEALTHY_TICKS, 1440 // int(tick.to_minutes())))  # an alarm evaluates at most a day
        self._alarm(
            "EventSourceMappings",
            metric,
            1,
            f"An MSK event source mapping of the trigger is not Enabled, "
            f"reports a problem, or is missing, in {ticks} periods of {int(tick.to_minutes())} minutes in a "
            "row: no MSK batch reaches the trigger (its log says which: EVENT_SOURCE_MAPPING_UNHEALTHY)",
            evaluation_periods=ticks,
        )
        return metric

    def _alarm(
        self,
        name: str,
        metric: cw.IMetric,
        threshold: float,
        description: str,
        *,
        notify: bool = True,
        evaluation_periods: int = 1,
        scope: Construct | None = None,
        missing: cw.TreatMissingData = cw.TreatMissingData.NOT_BREACHING,
    ) -> None:
        alarm = cw.Alarm(
            scope or self,
            name,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=missing,
            alarm_description=description,
        )
        if notify:
            alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms[name] = alarm
