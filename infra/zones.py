"""The Availability Zones EMR Serverless runs workers in, where AWS limits them, and the check of the subnets the
application is given against them (a subnet elsewhere leaves the job without workers in that zone).

"Endpoints and quotas for EMR Serverless", EMR Serverless User Guide,
https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/endpoints-quotas.html, service endpoints table
(read 2026-11-28): these Regions are "limited to the following Availability Zones", by AZ ID (an AZ's name, such
as us-east-1a, maps to a different zone in each account; its ID does not: `aws ec2 describe-subnets --subnet-ids ...
--query 'Subnets[].AvailabilityZoneId'`). A Region the table names without a limit is not listed here. Check the
page again before adding a Region.
"""

from __future__ import annotations

from collections.abc import Mapping

EMR_SERVERLESS_ZONES: dict[str, tuple[str, ...]] = {
    "us-east-1": ("use1-az1", "use1-az2", "use1-az4", "use1-az5", "use1-az6"),
    "us-east-2": ("use2-az1", "use2-az2", "use2-az3"),
    "us-west-1": ("usw1-az1", "usw1-az3"),
    "us-west-2": ("usw2-az1", "usw2-az2", "usw2-az3", "usw2-az4"),
    "ca-central-1": ("cac1-az1", "cac1-az2"),
}
ZONE_ID = r"[a-z]{2,5}\d-az\d{1,2}"


def limited(region: str) -> bool:
    """Whether EMR Serverless runs in some of `region`'s zones only (so the subnets' zones must be stated)."""
    return region in EMR_SERVERLESS_ZONES


def zone_faults(region: str, zones: Mapping[str, str]) -> list[tuple[str, str]]:
    """(subnet, why) for each subnet of `zones` (subnet id -> its AZ ID) EMR Serverless cannot use in `region`:
    a zone outside its list, or a zone another subnet already covers (the stack's interface endpoints take one
    subnet per zone)."""
    allowed = EMR_SERVERLESS_ZONES.get(region)
    faults: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for subnet, zone in zones.items():
        if allowed is not None and zone not in allowed:
            faults.append(
                (subnet, f"is in {zone}, where EMR Serverless has no workers (in {region}: {', '.join(allowed)})")
            )
        elif zone in seen:
            faults.append((subnet, f"is in {zone}, as {seen[zone]} is: give one subnet per Availability Zone"))
        seen.setdefault(zone, subnet)
    return faults
