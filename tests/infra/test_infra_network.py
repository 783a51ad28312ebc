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
from infra.constructs.network import (
    GATEWAY_SERVICES,
    HTTPS,
    INTERFACE_SERVICES,
    LAKE_FORMATION_SERVICE,
    NAT_INTERFACE_SERVICES,
    JobNetwork,
    interface_services,
)
from infra.errors import SettingsError
from infra.settings import EGRESS, EMR_PYTHONS, ENVIRONMENTS_DIR, parse_settings

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
    assert [
        (r["IpProtocol"], r["FromPort"], r["ToPort"], r["SourceSecurityGroupId"]) for r in props["SecurityGroupIngress"]
    ] == [("tcp", HTTPS, HTTPS, group) for group in settings.network.security_group_ids]
    assert [r["CidrIp"] for r in props["SecurityGroupEgress"]] == ["255.255.255.255/32"]  # sends nothing
    assert props["VpcId"] == settings.network.vpc_id


@pytest.mark.parametrize("egress", EGRESS)
def test_every_egress_gives_the_route_tables_s3_and_dynamodb_gateway_endpoints(tmp_path, egress):
    # a NAT gateway bills each GB it processes; gateway endpoints nothing, and their prefix-list routes win over 0/0
    settings = _settings(egress=egress)
    _, construct, template = _synth(settings, tmp_path)
    gateways = template.find_resources("AWS::EC2::VPCEndpoint", {"Properties": {"VpcEndpointType": "Gateway"}})
    assert sorted(g["Properties"]["ServiceName"] for g in gateways.values()) == [
        f"com.amazonaws.{settings.region}.{service}" for service in sorted(GATEWAY_SERVICES)
    ]
    assert all(g["Properties"]["RouteTableIds"] == list(settings.network.route_table_ids) for g in gateways.values())
    assert all(g["Properties"]["VpcId"] == settings.network.vpc_id for g in gateways.values())


@pytest.mark.parametrize("egress", EGRESS)
def test_every_egress_gives_the_pollers_an_sqs_endpoint_they_may_reach(tmp_path, egress):
    # the MSK event sources' on-failure destination is SQS: its endpoint must be in the cluster's VPC, NAT or not
    settings = _settings(egress=egress, security_group_ids=["sg-0a1b2c3d4e5f60708", "sg-0f1e2d3c4b5a69788"])
    _, construct, template = _synth(settings, tmp_path)
    (sqs,) = template.find_resources(
        "AWS::EC2::VPCEndpoint", {"Properties": {"ServiceName": f"com.amazonaws.{settings.region}.sqs"}}
    ).values()
    group = logical_id(construct.security_group)
    assert sqs["Properties"]["SecurityGroupIds"] == [{"Fn::GetAtt": [group, "GroupId"]}]
    assert sqs["Properties"]["SubnetIds"] == list(settings.network.subnet_ids)
    assert sqs["Properties"]["PrivateDnsEnabled"] is True
    rules = [r["Properties"] for r in template.find_resources("AWS::EC2::SecurityGroupEgress").values()]
    assert sorted((r["GroupId"], r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in rules) == [
        (g, "tcp", HTTPS, HTTPS) for g in sorted(settings.network.security_group_ids)
    ]
    assert all(r["DestinationSecurityGroupId"] == {"Fn::GetAtt": [group, "GroupId"]} for r in rules)


def test_nat_creates_the_gateway_and_sqs_endpoints_only_and_says_so(tmp_path):
    settings = _settings(egress="nat")
    stack, construct, template = _synth(settings, tmp_path)
    assert sorted(construct.endpoints) == sorted(GATEWAY_SERVICES + NAT_INTERFACE_SERVICES) == ["dynamodb", "s3", "sqs"]
    template.resource_count_is("AWS::EC2::VPCEndpoint", 3)
    Annotations.from_stack(stack).has_info(
        "/Net/Network", Match.string_like_regexp("network.egress is 'nat'.*NAT gateway")
    )
    summary = template.to_json()["Outputs"]["NetworkEgress"]["Value"]
    assert summary.startswith("nat:") and "gateway s3, dynamodb; interface sqs" in summary


def test_endpoints_add_lake_formation_where_the_doctor_checks_it(tmp_path):
    settings = _settings(egress="endpoints")
    assert LAKE_FORMATION_SERVICE not in interface_services(settings)
    assert interface_services(settings, lake_formation=True)[-1] == LAKE_FORMATION_SERVICE
    app = new_app(str(tmp_path))
    stack = Stack(app, "Net", env=Environment(account=settings.account, region=settings.region))
    construct = JobNetwork(stack, "Network", settings=settings, lake_formation=True)
    assert construct.endpoints[LAKE_FORMATION_SERVICE].vpc_endpoint_type == "Interface"


def test_endpoints_template_is_lint_clean(tmp_path):
    from cfnlint.api import ManualArgs, lint_file

    settings = _settings(egress="endpoints")
    _synth(settings, tmp_path)
    assert [str(f) for f in lint_file(tmp_path / "Net.template.json", ManualArgs(regions=[settings.region]))] == []


@pytest.mark.parametrize("egress", EGRESS)
@pytest.mark.parametrize(
    "reused",
    [
        {"s3": "vpce-0a1b2c3d4e5f60708"},
        {"dynamodb": "vpce-0b1c2d3e4f5a60718"},
        {"s3": "vpce-0a1b2c3d4e5f60708", "dynamodb": "vpce-0b1c2d3e4f5a60718"},
    ],
)
def test_named_gateway_endpoints_are_reused_not_created(tmp_path, reused, egress):
    # given existing gateway endpoints on the subnets' route tables (a second one for a service would fail the stack)
    settings = _settings(
        egress=egress,
        gateway_endpoint_ids=reused,
        route_table_ids=None if len(reused) == len(GATEWAY_SERVICES) else DEV["network"]["route_table_ids"],
    )
    # when synthesized
    _, construct, template = _synth(settings, tmp_path)
    # then only the others are created, the interface endpoints all are, and the output names the reused ids
    gateways = [
        e["Properties"]["ServiceName"].rsplit(".", 1)[1]
        for e in template.find_resources(
            "AWS::EC2::VPCEndpoint", {"Properties": {"VpcEndpointType": "Gateway"}}
        ).values()
    ]
    assert sorted(gateways) == sorted(set(GATEWAY_SERVICES) - set(reused))
    assert construct.reused == reused and not set(reused) & set(construct.endpoints)
    interfaces = INTERFACE_SERVICES if egress == "endpoints" else NAT_INTERFACE_SERVICES
    template.resource_count_is("AWS::EC2::VPCEndpoint", len(GATEWAY_SERVICES) - len(reused) + len(interfaces))
    summary = template.to_json()["Outputs"]["NetworkEgress"]["Value"]
    assert all(f"{service} (reused {endpoint})" in summary for service, endpoint in reused.items())


@pytest.mark.parametrize(
    "network, path",
    [
        ({"gateway_endpoint_ids": {"s3": "vpce-XYZ"}}, "network.gateway_endpoint_ids.s3"),
        ({"gateway_endpoint_ids": {"sts": "vpce-0a1b2c3d4e5f60708"}}, "network.gateway_endpoint_ids"),
        ({"gateway_endpoint_ids": {}}, "network.gateway_endpoint_ids"),
        ({"gateway_endpoint_ids": ["vpce-0a1b2c3d4e5f60708"]}, "network.gateway_endpoint_ids"),
        # every gateway endpoint reused: no route table to give one
        (
            {"gateway_endpoint_ids": {"s3": "vpce-0a1b2c3d4e5f60708", "dynamodb": "vpce-0b1c2d3e4f5a60718"}},
            "network.route_table_ids",
        ),
        # a gateway endpoint still to create needs route tables, with a NAT too
        (
            {"egress": "nat", "route_table_ids": None, "gateway_endpoint_ids": {"s3": "vpce-0a1b2c3d4e5f60708"}},
            "network.route_table_ids",
        ),
    ],
)
def test_malformed_reused_gateway_endpoints_are_named(network, path):
    with pytest.raises(SettingsError) as failed:
        _settings(**network)
    assert failed.value.setting == path


def test_shipped_environments_record_their_egress(synthesized):
    assert {env: s.deployment.settings.network.egress for env, s in synthesized.items()} == {
        "dev": "endpoints",
        "prod": "nat",
    }


@pytest.mark.parametrize("path", ["network.vpc_id", "network.egress", "network.route_table_ids"])
def test_missing_network_setting_is_named(path):
    doc = copy.deepcopy(DEV)
    del doc["network"][path.split(".")[1]]
    with pytest.raises(SettingsError, match=f"setting '{path}' in dev.json: is required"):
        parse_settings("dev", doc, "dev.json")


@pytest.mark.parametrize(
    "network, path",
    [
        ({"vpc_id": "vpc-XYZ"}, "network.vpc_id"),
        ({"egress": "internet"}, "network.egress"),
        ({"route_table_ids": ["rtb-nothex!"]}, "network.route_table_ids"),
        ({"route_table_ids": []}, "network.route_table_ids"),
        ({"egress": "nat", "route_table_ids": None}, "network.route_table_ids"),  # the gateway endpoints need them
    ],
)
def test_malformed_network_setting_is_named(network, path):
    with pytest.raises(SettingsError) as failed:
        _settings(**network)
    assert failed.value.setting == path


def test_every_known_release_has_the_default_interpreter_and_311_arrives_with_7_1():
    assert all("3.9" in pythons for pythons in EMR_PYTHONS.values())
    assert EMR_PYTHONS["emr-7.0.0"] == ("3.9",) and "3.11" in EMR_PYTHONS["emr-7.12.0"]


@pytest.mark.parametrize(
    "release, python, path",
    [
        ("emr-7.0.0", "3.11", "emr.python"),  # 7.0.0's image has no /usr/bin/python3.11
        ("emr-7.0.0", "3.9", "emr.python"),  # its only interpreter is older than the engine's requires-python
        ("emr-7.12.0", "3.12", "emr.python"),
        ("emr-7.12.0", "3.9", "emr.python"),  # on the image, older than the engine's requires-python
        ("emr-7.12.0", "three", "emr.python"),
        ("emr-7.99.0", "3.11", "emr.release_label"),  # a release whose image this table does not know
    ],
)
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


def _on_failure_queues(template: dict) -> list:
    """The on-failure destination of each MSK event source mapping, where it is an SQS queue."""
    resources = template["Resources"]
    found = []
    for r in resources.values():
        if r["Type"] != "AWS::Lambda::EventSourceMapping":
            continue
        destination = r["Properties"]["DestinationConfig"]["OnFailure"]["Destination"]
        queue = isinstance(destination, dict) and resources[destination["Fn::GetAtt"][0]]["Type"] == "AWS::SQS::Queue"
        found.append(queue or str(destination).startswith("arn:aws:sqs:"))
    return found


def test_each_environment_gives_its_vpc_gateway_endpoints_and_the_pollers_an_sqs_endpoint(each_env):
    # given the MSK event sources describe discarded batches in SQS (dev: endpoints, prod: nat)
    template, network = each_env.templates["service"], each_env.deployment.settings.network
    assert _on_failure_queues(template) and all(_on_failure_queues(template))
    # then the VPC has S3 and DynamoDB gateway endpoints on its route tables and an SQS interface endpoint
    endpoints = {
        r["Properties"]["ServiceName"].rsplit(".", 1)[1]: r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::EC2::VPCEndpoint"
    }
    for service in GATEWAY_SERVICES:
        assert endpoints[service]["VpcEndpointType"] == "Gateway" and endpoints[service]["VpcId"] == network.vpc_id
        assert endpoints[service]["RouteTableIds"] == list(network.route_table_ids)
    assert endpoints["sqs"]["VpcEndpointType"] == "Interface" and endpoints["sqs"]["VpcId"] == network.vpc_id
