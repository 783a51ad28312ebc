"""Subnets in Availability Zones EMR Serverless runs workers in: where AWS limits the zones of a Region ("Endpoints
and quotas for EMR Serverless", EMR Serverless User Guide: us-east-1 "limited to the following Availability Zones:
use1-az1, use1-az2, use1-az4, use1-az5, and use1-az6"), each subnet's zone is stated and checked at synthesis."""

import copy
import json

import pytest

from infra.errors import SettingsError
from infra.settings import ENVIRONMENTS_DIR, parse_settings
from infra.zones import EMR_SERVERLESS_ZONES

PROD = json.loads((ENVIRONMENTS_DIR / "prod.json").read_text())
DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())
FIRST, SECOND, THIRD = PROD["network"]["subnet_ids"]


def _prod(**zones):
    doc = copy.deepcopy(PROD)
    doc["network"]["subnet_zone_ids"].update(zones)
    return doc


def test_prods_subnets_are_in_zones_emr_serverless_supports_in_us_east_1():
    network = parse_settings("prod", PROD, "prod.json").network
    assert set(network.subnet_zone_ids) == set(network.subnet_ids)
    assert set(network.subnet_zone_ids.values()) <= set(EMR_SERVERLESS_ZONES["us-east-1"])


def test_a_subnet_in_a_zone_emr_serverless_does_not_run_in_is_named():
    # use1-az3 is not in the User Guide's list for us-east-1
    with pytest.raises(SettingsError) as failed:
        parse_settings("prod", _prod(**{SECOND: "use1-az3"}), "prod.json")
    assert failed.value.setting == f"network.subnet_zone_ids.{SECOND}"
    assert f"subnet {SECOND} is in use1-az3" in str(failed.value) and "use1-az6" in str(failed.value)


def test_two_subnets_in_one_zone_are_named():
    # an interface endpoint takes one subnet per zone
    with pytest.raises(SettingsError, match=f"subnet {THIRD} is in use1-az1, as {FIRST} is") as failed:
        parse_settings("prod", _prod(**{THIRD: "use1-az1"}), "prod.json")
    assert failed.value.setting == f"network.subnet_zone_ids.{THIRD}"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda n: n.pop("subnet_zone_ids"), "is required in us-east-1"),
        (lambda n: n["subnet_zone_ids"].pop(THIRD), "must map exactly the subnets"),
        (
            lambda n: n["subnet_zone_ids"].update({"subnet-0f0f0f0f0f0f0f0f0": "use1-az5"}),
            "must map exactly the subnets",
        ),
    ],
)
def test_zones_are_required_where_emr_serverless_limits_them_and_must_cover_the_subnets(change, message):
    doc = copy.deepcopy(PROD)
    change(doc["network"])
    with pytest.raises(SettingsError, match=message) as failed:
        parse_settings("prod", doc, "prod.json")
    assert failed.value.setting == "network.subnet_zone_ids"


def test_a_region_without_a_limit_needs_no_zones():
    assert "eu-west-1" not in EMR_SERVERLESS_ZONES
    assert parse_settings("dev", DEV, "dev.json").network.subnet_zone_ids == {}
