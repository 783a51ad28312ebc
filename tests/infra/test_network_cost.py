"""The network cost model (devtools/network_cost.py) counts the interface endpoints the stack makes, at AWS's
prices: interface endpoints by the hour and zone, a NAT gateway by the GB, gateway endpoints free."""

import copy
import json

import pytest

from devtools.network_cost import NetworkCost, interface_endpoints, nat_data_usd
from infra.constructs.network import interface_services
from infra.settings import ENVIRONMENTS_DIR, parse_settings

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())


@pytest.mark.parametrize("egress", ["endpoints", "nat"])
@pytest.mark.parametrize("table_bucket", [False, True])
@pytest.mark.parametrize("glue_tables", [False, True])
def test_the_model_counts_the_endpoints_the_stack_creates(egress, table_bucket, glue_tables):
    doc = copy.deepcopy(DEV)
    doc["network"]["egress"] = egress
    if table_bucket:
        doc["iceberg"]["table_bucket"] = "sink-tables"
    settings = parse_settings("dev", doc, "dev.json")
    assert interface_endpoints(egress, table_bucket, glue_tables) == interface_services(settings, glue_tables)


def test_a_month_of_endpoints_and_of_nat_data():
    # nine interface endpoints in two zones: 9 x 2 x 0.01 x 730; SQS's alone with a NAT
    assert NetworkCost("endpoints", 2, interface_endpoints("endpoints")).endpoints_usd == pytest.approx(131.40)
    assert NetworkCost("nat", 2, interface_endpoints("nat")).endpoints_usd == pytest.approx(14.60)
    # 10 MB/s to S3 for a month through a NAT: 26,280 GB at 0.045 (what the gateway endpoints save)
    assert nat_data_usd(10) == pytest.approx(1182.60)
