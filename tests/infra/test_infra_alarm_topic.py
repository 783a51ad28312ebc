"""The alarm topic's policy, as synthesized and resolved as CloudFormation deploys it, evaluated as SNS evaluates a
Publish: this account's CloudWatch alarms and the job-run rule may publish (over TLS), no one else.

A topic policy replaces SNS's default one, so a publisher it does not name is refused: CloudWatch's alarm actions
were ("Why didn't I receive an SNS notification for my CloudWatch alarm trigger?", AWS re:Post Knowledge Center).
The requests carry what each service sends: `aws:SourceArn` (the alarm's or the rule's ARN) and `aws:SourceAccount`
(EventBridge: "Using IAM policy conditions in Amazon EventBridge"), and `aws:SecureTransport`."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from infra.constructs.alarm_topic import CLOUDWATCH, EVENTBRIDGE
from tests.iam.actions import Need
from tests.iam.evaluate import resource_allows
from tests.iam.intrinsics import resolve
from tests.iam.physical import stack_physical
from tests.iam.policies import PolicyDocument
from tests.iam.recorder import Call

OTHER_ACCOUNT = "999999999999"


@dataclass(frozen=True)
class Topic:
    arn: str
    policy: PolicyDocument
    account: str
    region: str
    rule_arn: str  # the job-run rule's

    def allows(self, principal: str, source_arn: str | None, source_account: str | None, tls: bool = True) -> bool:
        context = {"aws:SecureTransport": "true" if tls else "false"}
        context.update({k: v for k, v in (("aws:SourceArn", source_arn), ("aws:SourceAccount", source_account)) if v})
        call = Call(principal, "sns", "Publish", self.region, {"TopicArn": self.arn})
        return resource_allows(self.policy, principal, Need("sns:Publish", self.arn, context, call))

    def alarm(self, name: str, account: str | None = None) -> str:
        return f"arn:aws:cloudwatch:{self.region}:{account or self.account}:alarm:{name}"


@pytest.fixture
def topic(each_env) -> Topic:
    settings, template = each_env.deployment.settings, each_env.templates["service"]
    physical = stack_physical(
        template, stack_name=each_env.deployment.service.stack_name, region=settings.region, account=settings.account
    )
    (policy,) = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::SNS::TopicPolicy"]
    (arn,) = resolve(policy["Topics"], physical)
    (rule,) = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::Events::Rule" and k.startswith("MonitoringJobRunFailed")
    ]
    document = PolicyDocument("AWS::SNS::TopicPolicy", resolve(policy["PolicyDocument"], physical))
    return Topic(arn, document, settings.account, settings.region, physical.get_att(rule, "Arn"))


def test_this_accounts_alarms_may_publish(topic):
    # an alarm of a connector's nested stack is an alarm of the same account and region
    assert topic.allows(CLOUDWATCH, topic.alarm("Sink-dev-Service-MonitoringLagorders"), topic.account)


def test_the_job_run_rule_may_publish(topic):
    assert topic.allows(EVENTBRIDGE, topic.rule_arn, topic.account)


@pytest.mark.parametrize("case", ["another account's alarm", "alarm without source", "another region's alarm"])
def test_no_other_alarm_may_publish(topic, case):
    source, account = {
        "another account's alarm": (topic.alarm("theirs", OTHER_ACCOUNT), OTHER_ACCOUNT),
        "alarm without source": (None, None),
        "another region's alarm": (topic.alarm("x").replace(topic.region, "ap-south-2"), topic.account),
    }[case]
    assert not topic.allows(CLOUDWATCH, source, account)


@pytest.mark.parametrize("case", ["another account's rule", "another rule of this account", "rule without source"])
def test_no_other_rule_may_publish(topic, case):
    other_rule = topic.rule_arn.rsplit("/", 1)[0] + "/someone-elses-rule"
    source, account = {
        "another account's rule": (topic.rule_arn.replace(topic.account, OTHER_ACCOUNT), OTHER_ACCOUNT),
        "another rule of this account": (other_rule, topic.account),
        "rule without source": (None, None),
    }[case]
    assert not topic.allows(EVENTBRIDGE, source, account)


@pytest.mark.parametrize("principal", ["s3.amazonaws.com", "lambda.amazonaws.com", "budgets.amazonaws.com"])
def test_no_other_service_may_publish_even_from_this_account(topic, principal):
    assert not topic.allows(principal, topic.alarm("x"), topic.account)
    assert not topic.allows(principal, topic.rule_arn, topic.account)


@pytest.mark.parametrize("principal, source", [(CLOUDWATCH, "alarm"), (EVENTBRIDGE, "rule")])
def test_a_publish_without_tls_is_refused(topic, principal, source):
    source_arn = topic.alarm("x") if source == "alarm" else topic.rule_arn
    assert topic.allows(principal, source_arn, topic.account)
    assert not topic.allows(principal, source_arn, topic.account, tls=False)
