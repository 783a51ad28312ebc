"""Alarms (failed job runs, lag, DLQ growth, trigger and replay errors) to an encrypted SNS topic, and a dashboard."""
from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.constructs.data_lake import DLQ_METRICS_ID
from infra.constructs.trigger import SERVICE as TRIGGER_SERVICE
from infra.settings import Settings

NAMESPACE = "SinkEngine"
FIVE_MINUTES = Duration.minutes(5)


def connector_metric(name: str, connector: str, statistic: str = "Maximum") -> cw.Metric:
    """A metric the trigger publishes per connector (Powertools adds the `service` dimension)."""
    return cw.Metric(namespace=NAMESPACE, metric_name=name, statistic=statistic, period=FIVE_MINUTES,
                     dimensions_map={"Connector": connector, "service": TRIGGER_SERVICE})


class Monitoring(Construct):
    """Attributes: `topic` (alarm notifications), `alarms` (name -> Alarm), `dashboard`."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, connectors: tuple[ConnectorSpec, ...],
                 application_id: str, bucket_name: str, trigger: lambda_.IFunction, replay: lambda_.IFunction):
        super().__init__(scope, id)
        key = kms.Key(self, "TopicKey", enable_key_rotation=True, description=f"Sink alarm topic ({settings.env})")
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(self, "Alarms", master_key=key, enforce_ssl=True, display_name=f"Sink alarms ({settings.env})")
        if settings.alarms.email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarms.email))
        jobs = {state: cw.Metric(namespace="AWS/EMRServerless", metric_name=f"{state}Jobs", statistic="Sum",
                                 period=FIVE_MINUTES, dimensions_map={"ApplicationId": application_id})
                for state in ("Failed", "Success", "Running")}
        dlq_puts = cw.Metric(namespace="AWS/S3", metric_name="PutRequests", statistic="Sum", period=FIVE_MINUTES,
                             dimensions_map={"BucketName": bucket_name, "FilterId": DLQ_METRICS_ID})
        self.alarms: dict[str, cw.Alarm] = {}
        self._alarm("FailedJobRuns", jobs["Failed"], 1, "A sink job run failed")
        self._alarm("DlqGrowth", dlq_puts, 1, "Records were written to the dead-letter prefix")
        self._alarm("TriggerErrors", trigger.metric_errors(period=FIVE_MINUTES, statistic="Sum"), 1,
                    "The trigger Lambda failed; MSK batches are being retried")
        self._alarm("ReplayErrors", replay.metric_errors(period=FIVE_MINUTES, statistic="Sum"), 1,
                    "A DLQ replay invocation failed; records it claimed are reported in doubt by the next one")
        for spec in connectors:
            self._alarm(f"Lag-{spec.name}", connector_metric("PendingRecords", spec.name), settings.alarms.pending_records,
                        f"Connector {spec.name} has too many records pending")
            self._alarm(f"Age-{spec.name}", connector_metric("OldestPendingAgeSeconds", spec.name),
                        settings.alarms.pending_age_seconds, f"Connector {spec.name}'s oldest pending record is too old")
        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=f"sink-{settings.env}", widgets=[
            [cw.GraphWidget(title="Job runs", left=list(jobs.values()), width=12),
             cw.GraphWidget(title="DLQ puts", left=[dlq_puts], width=12)],
            [cw.GraphWidget(title="Pending records", left=[connector_metric("PendingRecords", c.name) for c in connectors], width=12),
             cw.GraphWidget(title="Oldest pending (s)", left=[connector_metric("OldestPendingAgeSeconds", c.name) for c in connectors], width=12)],
            [cw.GraphWidget(title="Trigger", left=[trigger.metric_invocations(), trigger.metric_errors()],
                            right=[trigger.metric_duration()], width=24)],
        ])

    def _alarm(self, name: str, metric: cw.IMetric, threshold: float, description: str) -> None:
        alarm = cw.Alarm(self, name, metric=metric, threshold=threshold, evaluation_periods=1,
                         comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                         treat_missing_data=cw.TreatMissingData.NOT_BREACHING, alarm_description=description)
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms[name] = alarm
