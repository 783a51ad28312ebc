"""The job as deployed: its network path to AWS APIs (VPC endpoints the stack creates, or a NAT the user states)
and its interpreter (a release whose image has it), each setting checked at synthesis."""
import copy
import json

import pytest
from aws_cdk import Environment, Stack, Validations
from aws_cdk.assertions import Annotations, Match, Template
from cdk_nag import AwsSolutionsChecks

from infra.application import new_app
from infra.constructs.nag import logical_id
from infra.constructs.network import GATEWAY_SERVICES, HTTPS, INTERFACE_SERVICES, JobNetwork
from infra.errors import SettingsError
from infra.settings import EMR_PYTHONS, ENVIRONMENTS_DIR, parse_settings

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())


def _settings(**network):
    doc = copy.deepcopy(DEV)
    doc["network"].update(network)
    doc["network"] = {k: v for k, v in doc["network"].items() if v is not None}
    return parse_settings("dev", doc, "dev.json")


def _synth(settings, tmp_path):
    """JobNetwork alone in a stack of the environment, synthesized under cdk-nag (a finding fails synthesis)."""
    app = new_app(str(tmp_path))
    stack = Stack(app, "Net", env=Environment(account=settings.account, region=settings.region))
    network = JobNetwork(stack, "Network", settings=settings)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()
    return stack, network, Template.from_json(json.loads((tmp_path / "Net.template.json").read_text()))


def test_endpoints_give_the_subnets_every_service_the_job_calls(tmp_path):
    settings = _settings(egress="endpoints")
    network = settings.network
    _, construct, template = _synth(settings, tmp_path)
    endpoints = template.find_resources("AWS::EC2::VPCEndpoint")
    by_service = {e["Properties"]["ServiceName"].rsplit(".", 1)[1]: e["Properties"] for e in endpoints.values()}
    assert sorted(by_service) == sorted(GATEWAY_SERVICES + INTERFACE_SERVICES) == sorted(construct.endpoints)
    group = next(iter(template.find_resources("AWS::EC2::SecurityGroup")))
    for service, props in by_service.items():
        assert props["ServiceName"] == f"com.amazonaws.{settings.region}.{service}"
        assert props["VpcId"] == network.vpc_id
        if service in GATEWAY_SERVICES:
            assert props["VpcEndpointType"] == "Gateway" and props["RouteTableIds"] == list(network.route_table_ids)
        else:
            assert props["VpcEndpointType"] == "Interface" and props["PrivateDnsEnabled"] is True
            assert props["SubnetIds"] == list(network.subnet_ids)
            assert props["SecurityGroupIds"] == [{"Fn::GetAtt": [group, "GroupId"]}]
    assert {"sts", "glue", "logs", "kms", "secretsmanager", "ssm"} <= set(INTERFACE_SERVICES)
    assert {"s3", "dynamodb"} == set(GATEWAY_SERVICES)


def test_endpoint_security_group_admits_https_from_the_job_groups_only(tmp_path):
    settings = _settings(egress="endpoints", security_group_ids=["sg-0a1b2c3d4e5f60708", "sg-0f1e2d3c4b5a69788"])
    _, construct, template = _synth(settings, tmp_path)
    props = template.find_resources("AWS::EC2::SecurityGroup")[logical_id(construct.security_group)]["Properties"]
    assert [(r["IpProtocol"], r["FromPort"], r["ToPort"], r["SourceSecurityGroupId"]) for r in props["SecurityGroupIngress"]] \
        == [("tcp", HTTPS, HTTPS, group) for group in settings.network.security_group_ids]
    assert [r["CidrIp"] for r in props["SecurityGroupEgress"]] == ["255.255.255.255/32"]  # sends nothing
    assert props["VpcId"] == settings.network.vpc_id


def test_nat_creates_nothing_and_says_so(tmp_path):
    settings = _settings(egress="nat", route_table_ids=None)
    stack, construct, template = _synth(settings, tmp_path)
    assert construct.endpoints == {} and construct.security_group is None
    template.resource_count_is("AWS::EC2::VPCEndpoint", 0)
    template.resource_count_is("AWS::EC2::SecurityGroup", 0)
    Annotations.from_stack(stack).has_info("/Net/Network", Match.string_like_regexp("network.egress is 'nat'.*NAT gateway"))
    assert template.to_json()["Outputs"]["NetworkEgress"]["Value"].startswith("nat:")


def test_endpoints_template_is_lint_clean(tmp_path):
    from cfnlint.api import ManualArgs, lint_file

    settings = _settings(egress="endpoints")
    _synth(settings, tmp_path)
    assert [str(f) for f in lint_file(tmp_path / "Net.template.json", ManualArgs(regions=[settings.region]))] == []


@pytest.mark.parametrize("reused", [{"s3": "vpce-0a1b2c3d4e5f60708"}, {"dynamodb": "vpce-0b1c2d3e4f5a60718"},
                                    {"s3": "vpce-0a1b2c3d4e5f60708", "dynamodb": "vpce-0b1c2d3e4f5a60718"}])
def test_named_gateway_endpoints_are_reused_not_created(tmp_path, reused):
    # given existing gateway endpoints on the subnets' route tables (a second one for a service would fail the stack)
    settings = _settings(egress="endpoints", gateway_endpoint_ids=reused,
                         route_table_ids=None if len(reused) == len(GATEWAY_SERVICES) else DEV["network"]["route_table_ids"])
    # when synthesized
    _, construct, template = _synth(settings, tmp_path)
    # then only the others are created, the interface endpoints all are, and the output names the reused ids
    gateways = [e["Properties"]["ServiceName"].rsplit(".", 1)[1] for e in
                template.find_resources("AWS::EC2::VPCEndpoint", {"Properties": {"VpcEndpointType": "Gateway"}}).values()]
    assert sorted(gateways) == sorted(set(GATEWAY_SERVICES) - set(reused))
    assert construct.reused == reused and not set(reused) & set(construct.endpoints)
    template.resource_count_is("AWS::EC2::VPCEndpoint", len(GATEWAY_SERVICES) - len(reused) + len(INTERFACE_SERVICES))
    summary = template.to_json()["Outputs"]["NetworkEgress"]["Value"]
    assert all(f"{service} (reused {endpoint})" in summary for service, endpoint in reused.items())


@pytest.mark.parametrize("network, path", [
    ({"gateway_endpoint_ids": {"s3": "vpce-XYZ"}}, "network.gateway_endpoint_ids.s3"),
    ({"gateway_endpoint_ids": {"sts": "vpce-0a1b2c3d4e5f60708"}}, "network.gateway_endpoint_ids"),
    ({"gateway_endpoint_ids": {}}, "network.gateway_endpoint_ids"),
    ({"gateway_endpoint_ids": ["vpce-0a1b2c3d4e5f60708"]}, "network.gateway_endpoint_ids"),
    # every gateway endpoint reused: no route table to give one
    ({"gateway_endpoint_ids": {"s3": "vpce-0a1b2c3d4e5f60708", "dynamodb": "vpce-0b1c2d3e4f5a60718"}},
     "network.route_table_ids"),
    ({"egress": "nat", "route_table_ids": None, "gateway_endpoint_ids": {"s3": "vpce-0a1b2c3d4e5f60708"}},
     "network.gateway_endpoint_ids"),
])
def test_malformed_reused_gateway_endpoints_are_named(network, path):
    with pytest.raises(SettingsError) as failed:
        _settings(**network)
    assert failed.value.setting == path


def test_shipped_environments_record_their_egress(synthesized):
    assert {env: s.deployment.settings.network.egress for env, s in synthesized.items()} == {"dev": "endpoints", "prod": "nat"}


@pytest.mark.parametrize("path", ["network.vpc_id", "network.egress", "network.route_table_ids"])
def test_missing_network_setting_is_named(path):
    doc = copy.deepcopy(DEV)
    del doc["network"][path.split(".")[1]]
    with pytest.raises(SettingsError, match=f"setting '{path}' in dev.json: is required"):
        parse_settings("dev", doc, "dev.json")


@pytest.mark.parametrize("network, path", [
    ({"vpc_id": "vpc-XYZ"}, "network.vpc_id"),
    ({"egress": "internet"}, "network.egress"),
    ({"route_table_ids": ["rtb-nothex!"]}, "network.route_table_ids"),
    ({"route_table_ids": []}, "network.route_table_ids"),
    ({"egress": "nat"}, "network.route_table_ids"),  # route tables are for endpoints: a 'nat' that lists them is a mistake
])
def test_malformed_network_setting_is_named(network, path):
    with pytest.raises(SettingsError) as failed:
        _settings(**network)
    assert failed.value.setting == path


def test_every_known_release_has_the_default_interpreter_and_311_arrives_with_7_1():
    assert all("3.9" in pythons for pythons in EMR_PYTHONS.values())
    assert EMR_PYTHONS["emr-7.0.0"] == ("3.9",) and "3.11" in EMR_PYTHONS["emr-7.12.0"]


@pytest.mark.parametrize("release, python, path", [
    ("emr-7.0.0", "3.11", "emr.python"),  # 7.0.0's image has no /usr/bin/python3.11
    ("emr-7.0.0", "3.9", "emr.python"),  # its only interpreter is older than the engine's requires-python
    ("emr-7.12.0", "3.12", "emr.python"),
    ("emr-7.12.0", "3.9", "emr.python"),  # on the image, older than the engine's requires-python
    ("emr-7.12.0", "three", "emr.python"),
    ("emr-7.99.0", "3.11", "emr.release_label"),  # a release whose image this table does not know
])
def test_release_and_interpreter_must_be_a_known_combination(release, python, path):
    doc = copy.deepcopy(DEV)
    doc["emr"].update(release_label=release, python=python)
    with pytest.raises(SettingsError, match=f"setting '{path}'") as failed:
        parse_settings("dev", doc, "dev.json")
    assert failed.value.setting == path


@pytest.mark.parametrize("release, python", [("emr-7.1.0", "3.11"), ("emr-7.13.0", "3.11")])
def test_known_combinations_are_accepted(release, python):
    doc = copy.deepcopy(DEV)
    doc["emr"].update(release_label=release, python=python)
    emr = parse_settings("dev", doc, "dev.json").emr
    assert (emr.release_label, emr.interpreter) == (release, f"/usr/bin/python{python}")
