"""`python -m infra.quota_doctor`: the account's EMR Serverless vCPU quota (Service Quotas, emr-serverless /
L-D05C8A75) against the environment's worst case (infra/capacity.py) and its `emr.account_vcpu_quota`. moto's
Service Quotas knows only VPC quotas (docs/aws-fidelity.md), so the answers are botocore Stubber's, shaped as the
API Reference's GetServiceQuota and GetAWSDefaultServiceQuota responses."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from infra.quota_doctor import QUOTA_CODE, SERVICE_CODE, Quota, account_quota, main, report
from infra.settings import load_settings

REQUEST = {"ServiceCode": SERVICE_CODE, "QuotaCode": QUOTA_CODE}


def _quota(value: float) -> dict:
    return {"Quota": {"ServiceCode": SERVICE_CODE, "QuotaCode": QUOTA_CODE, "Value": value}}


@pytest.fixture
def client():
    quotas = boto3.client("service-quotas", region_name="eu-west-1", aws_access_key_id="a", aws_secret_access_key="b")
    with Stubber(quotas) as stubber:
        yield quotas, stubber
        stubber.assert_no_pending_responses()


def test_the_applied_quota_is_read(client):
    quotas, stubber = client
    stubber.add_response("get_service_quota", _quota(32.0), REQUEST)
    assert account_quota(quotas) == Quota(32.0, "applied (GetServiceQuota)")


def test_an_account_without_an_applied_value_reports_the_default(client):
    quotas, stubber = client
    stubber.add_client_error("get_service_quota", "NoSuchResourceException", expected_params=REQUEST)
    stubber.add_response("get_aws_default_service_quota", _quota(16.0), REQUEST)
    quota = account_quota(quotas)
    assert (quota.value, quota.source) == (16.0, "the default: no applied value (GetAWSDefaultServiceQuota)")


def test_a_denied_read_names_the_action(client):
    quotas, stubber = client
    stubber.add_client_error("get_service_quota", "AccessDeniedException", expected_params=REQUEST)
    quota = account_quota(quotas)
    assert quota.value is None and "servicequotas:GetServiceQuota" in quota.source


def test_an_account_that_holds_the_environment_passes():
    # dev needs 9 vCPUs at once and states 16; an account of 16 holds it
    lines, ok = report(load_settings("dev"), Quota(16.0, "applied"))
    assert ok
    assert lines[0].startswith("environment dev: needs 9 vCPUs at once") and lines[-1] == "ok: 7 vCPUs to spare"


def test_an_account_below_the_need_and_the_setting_fails_naming_both():
    # prod needs 22 and states 32: an account left at 16 holds neither
    lines, ok = report(load_settings("prod"), Quota(16.0, "the default"))
    assert not ok
    assert lines[-2:] == [
        "FAILED: 22 needed, 16 allowed: runs past the quota would not start their workers",
        "FAILED: emr.account_vcpu_quota=32 states more than the account's 16: set it to 16",
    ]


def test_an_unread_quota_fails():
    lines, ok = report(load_settings("dev"), Quota(None, "GetServiceQuota failed"))
    assert not ok and lines[-1].endswith("quota unknown: GetServiceQuota failed")


def test_the_command_reports_the_environment_against_the_account(client, monkeypatch, capsys):
    quotas, stubber = client
    stubber.add_response("get_service_quota", _quota(8.0), REQUEST)
    monkeypatch.setattr("infra.quota_doctor.boto3.client", lambda service, region_name: quotas)
    assert main(["--env", "dev"]) == 1
    out = capsys.readouterr().out
    assert "8 vCPUs, applied (GetServiceQuota)" in out and "FAILED: 9 needed, 8 allowed" in out
