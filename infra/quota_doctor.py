"""`python -m infra.quota_doctor --env <env>`: the account's EMR Serverless vCPU quota, read from Service Quotas,
against what the environment needs at once, and against what its settings say the account has. Exit 0 when the
account holds the need and the setting, 1 otherwise (or when the quota cannot be read), naming what to change.

Why here and not in `sink-engine doctor`: the need is the environment's (every connector's runs, infra/capacity.py
`check_concurrency`, as synthesis sums it for infra/quotas.py), not one connector's, and the quota is the account's.
The engine's doctor runs as one connector's job role inside the environment's network, which with `network.egress`
`endpoints` has no Service Quotas endpoint (infra/constructs/network.py), and the role has no grant for it. This
command runs where `cdk deploy` runs, with the deployer's credentials, from the same settings and connectors
synthesis reads, so the need it reports is the one synthesis checked.

Service Quotas: EMR Serverless' "Max concurrent vCPUs per account" is service code `emr-serverless`, quota code
`L-D05C8A75` ("Endpoints and quotas for EMR Serverless", EMR Serverless User Guide,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/endpoints-quotas.html; the Service Quotas console
lists it under that code). GetServiceQuota returns the applied value; for a quota never changed it may have none
(NoSuchResourceException), and GetAWSDefaultServiceQuota returns the default (Service Quotas API Reference,
https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html and
API_GetAWSDefaultServiceQuota.html). Both need `servicequotas:Get*` on the caller.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from infra.capacity import check_concurrency
from infra.connectors import load_connectors
from infra.settings import Settings, load_settings

SERVICE_CODE, QUOTA_CODE = "emr-serverless", "L-D05C8A75"


@dataclass(frozen=True)
class Quota:
    """The account's quota: its value (None: unread) and where it came from (or why it could not be read)."""

    value: float | None
    source: str


def account_quota(client: Any) -> Quota:
    """The applied quota, or the default when the account has no applied value; None with the error otherwise."""
    try:
        applied = client.get_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=QUOTA_CODE)["Quota"]["Value"]
        return Quota(applied, "applied (GetServiceQuota)")
    except ClientError as e:
        if e.response["Error"]["Code"] != "NoSuchResourceException":
            return Quota(None, _unread("GetServiceQuota", e))
    try:
        default = client.get_aws_default_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=QUOTA_CODE)["Quota"]
        return Quota(default["Value"], "the default: no applied value (GetAWSDefaultServiceQuota)")
    except (ClientError, BotoCoreError) as e:
        return Quota(None, _unread("GetAWSDefaultServiceQuota", e))


def _unread(call: str, error: Exception) -> str:
    return f"{call} {SERVICE_CODE}/{QUOTA_CODE} failed: {error} (the caller needs servicequotas:{call})"


def report(settings: Settings, quota: Quota) -> tuple[list[str], bool]:
    """The report's lines and whether the account holds what the environment needs and states."""
    need = check_concurrency(settings, load_connectors(settings)).footprint.cpu
    stated = settings.emr.account_vcpu_quota
    lines = [
        f"environment {settings.env}: needs {need} vCPUs at once at worst (infra/capacity.py), states "
        f"emr.account_vcpu_quota={stated}",
    ]
    if quota.value is None:
        return [*lines, f"account {settings.account} in {settings.region}: quota unknown: {quota.source}"], False
    have = int(quota.value)
    lines.append(f"account {settings.account} in {settings.region}: {have} vCPUs, {quota.source}")
    ok = True
    if have < need:
        ok = False
        lines.append(f"FAILED: {need} needed, {have} allowed: runs past the quota would not start their workers")
    if have < stated:
        ok = False
        lines.append(f"FAILED: emr.account_vcpu_quota={stated} states more than the account's {have}: set it to {have}")
    if ok:
        lines.append(f"ok: {have - need} vCPUs to spare")
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True, help="the environment (infra/environments/<env>.json)")
    args = parser.parse_args(argv)
    settings = load_settings(args.env)
    lines, ok = report(settings, account_quota(boto3.client("service-quotas", region_name=settings.region)))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
