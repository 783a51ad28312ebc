"""The alarm topic: KMS-encrypted, TLS only, and published to by this account's CloudWatch alarms and by the rules
given to `publish_rule`, no one else.

A topic policy replaces SNS's default policy, so each publisher must be named in it. CloudWatch is not named by
an alarm action (CDK's SnsAction adds nothing to the policy): without its statement every alarm notification is
refused ("Resource: arn:aws:cloudwatch:...:alarm:... is not authorized to perform: SNS:Publish", AWS re:Post
Knowledge Center, "Why didn't I receive an SNS notification for my CloudWatch alarm trigger?",
https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger, which scopes the statement with
`aws:SourceArn` on the alarms' ARNs). EventBridge sends `aws:SourceArn` (the rule's ARN) and `aws:SourceAccount`
(the rule's account) with its requests to targets ("Using IAM policy conditions in Amazon EventBridge",
https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-conditions.html): the rule's statement names its
own ARN, where CDK's SnsTopic target grants any rule of any account.
"""

from __future__ import annotations

import jsii
from aws_cdk import Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk.interfaces.aws_events import IRuleRef
from constructs import Construct

CLOUDWATCH = "cloudwatch.amazonaws.com"
EVENTBRIDGE = "events.amazonaws.com"


class AlarmTopic:
    """Props: `env` (in the topic's and key's descriptions). Attributes: `topic`, `key` (its KMS key, which both
    publishers may use to encrypt). Both are children of `scope` (`TopicKey`, `Alarms`), as they were before this
    class: a topic created anew under another logical id would lose its confirmed subscriptions."""

    def __init__(self, scope: Construct, *, env: str):
        self._scope = scope
        self.key = kms.Key(scope, "TopicKey", enable_key_rotation=True, description=f"Sink alarm topic ({env})")
        for publisher in (CLOUDWATCH, EVENTBRIDGE):
            self.key.grant(iam.ServicePrincipal(publisher), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(
            scope, "Alarms", master_key=self.key, enforce_ssl=True, display_name=f"Sink alarms ({env})"
        )
        stack = Stack.of(self._scope)
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsOfThisAccount",
                principals=[iam.ServicePrincipal(CLOUDWATCH)],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{stack.partition}:cloudwatch:{stack.region}:{stack.account}:alarm:*"
                    },
                },
            )
        )

    def publish_rule(self, rule: events.Rule, message: events.RuleTargetInput) -> None:
        """Make `message` of each event `rule` matches a notification, allowed for that rule alone."""
        stack = Stack.of(self._scope)
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid=f"Rule{rule.node.id}",
                principals=[iam.ServicePrincipal(EVENTBRIDGE)],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnEquals": {"aws:SourceArn": rule.rule_arn},
                },
            )
        )
        rule.add_target(_TopicTarget(self.topic, message))


@jsii.implements(events.IRuleTarget)
class _TopicTarget:
    """An EventBridge target publishing to `topic`; unlike CDK's SnsTopic it grants nothing (publish_rule does)."""

    def __init__(self, topic: sns.ITopic, message: events.RuleTargetInput):
        self._topic, self._message = topic, message

    def bind(self, rule: IRuleRef, id: str | None = None) -> events.RuleTargetConfig:  # noqa: ARG002
        return events.RuleTargetConfig(arn=self._topic.topic_arn, input=self._message)
