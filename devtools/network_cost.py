"""What the job's network costs a month in each `network.egress` (infra/constructs/network.py), beside what S3 and
DynamoDB traffic would cost through a NAT gateway without the gateway endpoints. Prints a table. Usage:
    python -m devtools.network_cost [--zones 2 3] [--rates 0.1 1 10] [--table-bucket] [--glue-tables]

Model: a month of 730 hours; the stack's interface endpoints (`interface_services`: nine with "endpoints", S3 Tables'
with a table bucket, Lake Formation's with Iceberg tables in Glue; SQS's alone with "nat"), each in one subnet per
Availability Zone (`--zones`), billed per endpoint-hour in each zone. Their data is small and left out: control-plane
calls (STS, KMS, Logs, metrics, the pollers' rare discarded batch), never the records. The records' bytes go to S3
(and the offsets to DynamoDB) through the free gateway endpoints, in both modes; at `--rates` MB/s written, the last
column is what those bytes would cost through a NAT gateway (its processing charge; its hours are the VPC's, not the
stack's), as they did in "nat" before the stack made gateway endpoints there.

Prices (USD, us-east-1), as AWS's pricing pages list them (read 2026-11-28; the pages render their tables
client-side, the figures are the ones their stored copies show):
- Interface endpoint (AWS PrivateLink): 0.01 per endpoint per Availability Zone per hour, 0.01 per GB processed
  for the first PB (https://aws.amazon.com/privatelink/pricing/).
- NAT gateway: 0.045 per hour and 0.045 per GB processed; gateway endpoints (S3, DynamoDB): no charge
  (https://aws.amazon.com/vpc/pricing/).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from infra.constructs.network import (
    INTERFACE_SERVICES,
    LAKE_FORMATION_SERVICE,
    NAT_INTERFACE_SERVICES,
    S3_TABLES_SERVICE,
)

ENDPOINT_ZONE_HOUR = 0.01
NAT_GB = 0.045
HOURS_PER_MONTH = 730
GB_PER_MONTH_PER_MB_S = 3600 * HOURS_PER_MONTH / 1000  # 2,628


@dataclass(frozen=True)
class NetworkCost:
    egress: str  # nat | endpoints
    zones: int
    endpoints: tuple[str, ...]  # the interface endpoints the stack creates

    @property
    def endpoints_usd(self) -> float:
        """The interface endpoints' hours of a month."""
        return len(self.endpoints) * self.zones * ENDPOINT_ZONE_HOUR * HOURS_PER_MONTH


def interface_endpoints(egress: str, table_bucket: bool = False, glue_tables: bool = False) -> tuple[str, ...]:
    """The interface endpoints of `egress` (as infra/constructs/network.py's `interface_services` chooses them)."""
    if egress == "nat":
        return NAT_INTERFACE_SERVICES
    return (
        INTERFACE_SERVICES
        + ((S3_TABLES_SERVICE,) if table_bucket else ())
        + ((LAKE_FORMATION_SERVICE,) if glue_tables else ())
    )


def nat_data_usd(rate_mb_s: float) -> float:
    """What a month of `rate_mb_s` MB/s to S3 costs through a NAT gateway (its GB charge)."""
    return rate_mb_s * GB_PER_MONTH_PER_MB_S * NAT_GB


def table(zones: list[int], rates: list[float], table_bucket: bool, glue_tables: bool) -> list[str]:
    lines = [
        "| egress | zones | interface endpoints | endpoints USD per month | S3 and DynamoDB through gateway endpoints "
        "| the same through a NAT gateway, USD per month at " + ", ".join(f"{r:g}" for r in rates) + " MB/s |",
        "|---|---|---|---|---|---|",
    ]
    for egress in ("endpoints", "nat"):
        for count in zones:
            cost = NetworkCost(egress, count, interface_endpoints(egress, table_bucket, glue_tables))
            nat = ", ".join(f"{nat_data_usd(r):,.0f}" for r in rates)
            lines.append(
                f"| {egress} | {count} | {len(cost.endpoints)} ({', '.join(cost.endpoints)}) | "
                f"{cost.endpoints_usd:,.2f} | free | {nat} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zones", type=int, nargs="+", default=[2, 3], help="Availability Zones (subnets)")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.1, 1, 10], help="MB/s written to S3")
    parser.add_argument("--table-bucket", action="store_true", help="iceberg.table_bucket is set (S3 Tables)")
    parser.add_argument("--glue-tables", action="store_true", help="an Iceberg connector's tables are in Glue")
    args = parser.parse_args()
    print(f"A month of {HOURS_PER_MONTH} hours, us-east-1 prices")
    print("\n".join(table(args.zones, args.rates, args.table_bucket, args.glue_tables)))


if __name__ == "__main__":
    main()
