"""The network path from the job (EMR Serverless) and the replay Lambda, in `network.subnet_ids`, to the AWS APIs
they call, and from the MSK event source's pollers to the queue they describe discarded batches in: VPC endpoints the
stack creates, and a NAT route the user states the subnets have.

In both egress modes, S3 (data, configs, job artifacts) and DynamoDB (offsets) go through gateway endpoints on the
subnets' route tables (GATEWAY_SERVICES), created, or reused when `network.gateway_endpoint_ids` names one: they
cost nothing, where a NAT gateway charges for each GB it processes (0.045 USD per GB in us-east-1,
https://aws.amazon.com/vpc/pricing/; devtools/network_cost.py). A gateway endpoint's prefix-list route is more
specific than a NAT's 0.0.0.0/0, so S3 and DynamoDB traffic takes it with a NAT route in place.

And in both modes an interface endpoint for SQS: the trigger's MSK event sources describe a batch they discard in an
SQS queue (infra/constructs/trigger.py), and "You must deploy a VPC endpoint for your on-failure destination service
inside your Amazon MSK cluster VPC" ("Capturing discarded batches for an Amazon MSK event source", Lambda Developer
Guide, https://docs.aws.amazon.com/lambda/latest/dg/with-msk-on-failure.html), a NAT notwithstanding.

With "endpoints" the rest goes through interface endpoints in the subnets too: STS, the Glue Schema Registry,
CloudWatch Logs (the job's log group), CloudWatch (`monitoring`: each run's metrics, PutMetricData), KMS, Secrets
Manager and SSM (`${secrets:...}` and `${ssm:...}` references), Lambda + STS for the MSK event source's pollers
(on-demand mode), which run in the cluster's VPC and, without a NAT, need both endpoints there; S3 Tables with a table
bucket; Lake Formation where an Iceberg connector's tables are in Glue (the doctor's Lake Formation check,
sink_engine/target/iceberg_tables/lake_formation.py, runs in the job).
"""

from __future__ import annotations

from aws_cdk import Annotations, CfnOutput
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from infra.settings import GATEWAY_SERVICES, Settings

INTERFACE_SERVICES = ("sts", "glue", "logs", "monitoring", "kms", "secretsmanager", "ssm", "lambda", "sqs")
NAT_INTERFACE_SERVICES = ("sqs",)  # the pollers' on-failure destination (the module docstring)
S3_TABLES_SERVICE = "s3tables"  # S3 Tables' Iceberg REST endpoint, when the settings name `iceberg.table_bucket`
LAKE_FORMATION_SERVICE = "lakeformation"  # the doctor's check of an Iceberg connector's tables in Glue
HTTPS = 443


class JobNetwork(Construct):
    """Props: `settings` (its `region` and `network`: vpc_id, subnet_ids, security_group_ids, egress,
    route_table_ids, gateway_endpoint_ids), `lake_formation` (an Iceberg connector's tables are in Glue).

    Attributes: `egress` ("nat" or "endpoints"); `endpoints` (service name -> CfnVPCEndpoint the stack creates);
    `reused` (service name -> the id of an existing gateway endpoint the subnets use instead); `security_group`
    (the interface endpoints' CfnSecurityGroup, admitting HTTPS from each of `network.security_group_ids` and sending
    nothing); `egress_rules` (each of those groups' HTTPS egress rule to it).

    Gateway endpoints for GATEWAY_SERVICES on `network.route_table_ids` (except those `network.gateway_endpoint_ids`
    names: a route table takes a service's prefix-list route from one gateway endpoint only, so creating a second for
    a route table that has one fails the stack; a reused endpoint must be on the subnets' route tables and its policy
    must allow the job's calls, which synthesis cannot check), and interface endpoints with private DNS for
    `interface_services(...)` in `network.subnet_ids`. The VPC must have DNS support and DNS hostnames enabled, the
    subnets must be in distinct Availability Zones (an interface endpoint takes one subnet per zone), and the VPC must
    not already have an interface endpoint with private DNS for one of these services. The MSK event source's pollers
    run in the cluster's subnets with the cluster's security groups: list them in `network.security_group_ids`, and
    each of those groups gets an egress rule for HTTPS to the endpoints (a group whose egress is restricted would
    keep the pollers from the SQS endpoint).

    "nat": the subnets must also route 0.0.0.0/0 to a NAT gateway, for the other services. Synthesis says so (an
    info annotation that `cdk synth` prints), and both modes are recorded in the stack output `NetworkEgress`."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings, lake_formation: bool = False):
        super().__init__(scope, id)
        network = settings.network
        self.egress = network.egress
        self.endpoints: dict[str, ec2.CfnVPCEndpoint] = {}
        self.reused: dict[str, str] = dict(network.gateway_endpoint_ids)
        interfaces = interface_services(settings, lake_formation)
        self.security_group = self._security_group(settings)
        self.egress_rules = [
            ec2.CfnSecurityGroupEgress(
                self,
                f"HttpsToEndpoints-{group}",
                group_id=group,
                ip_protocol="tcp",
                from_port=HTTPS,
                to_port=HTTPS,
                destination_security_group_id=self.security_group.attr_group_id,
                description=f"HTTPS to the sink's VPC interface endpoints ({', '.join(interfaces)})",
            )
            for group in network.security_group_ids
        ]
        self._gateways(settings)
        self._interfaces(settings, interfaces)
        self._output(settings, interfaces)

    def _output(self, settings: Settings, interfaces: tuple[str, ...]) -> None:
        """The stack output `NetworkEgress` (what is created, what the NAT must carry), and with "nat" an info
        annotation saying the same."""
        network = settings.network
        gateways = [f"{s} (reused {self.reused[s]})" if s in self.reused else s for s in GATEWAY_SERVICES]
        summary = f"gateway {', '.join(gateways)}; interface {', '.join(interfaces)}"
        if network.egress == "nat":
            Annotations.of(self).add_info(
                f"network.egress is 'nat': subnets {', '.join(network.subnet_ids)} must route to a NAT gateway to "
                "reach STS, Glue, CloudWatch Logs, CloudWatch, KMS, Secrets Manager, SSM and Lambda"
                + (", and S3 Tables" if settings.iceberg.table_bucket else "")
                + f"; S3 and DynamoDB go through gateway endpoints, SQS through an interface endpoint ({summary})"
            )
            summary = f"nat: the other AWS APIs through a NAT gateway; {summary}"
        else:
            summary = f"endpoints: {summary}"
        CfnOutput(
            self,
            "Egress",
            key="NetworkEgress",
            value=summary,
            description="How the job and the replay Lambda reach AWS APIs (settings network.egress)",
        )

    def _security_group(self, settings: Settings) -> ec2.CfnSecurityGroup:
        network = settings.network
        return ec2.CfnSecurityGroup(
            self,
            "EndpointSecurityGroup",
            vpc_id=network.vpc_id,
            group_description=f"Sink {settings.env} VPC interface endpoints: HTTPS from the job security groups",
            security_group_ingress=[
                ec2.CfnSecurityGroup.IngressProperty(
                    ip_protocol="tcp",
                    from_port=HTTPS,
                    to_port=HTTPS,
                    source_security_group_id=group,
                    description=f"HTTPS from {group}",
                )
                for group in network.security_group_ids
            ],
            # endpoints answer, they never connect out: replace the default allow-all egress with a rule that
            # matches nothing (the form CDK's SecurityGroup uses for allowAllOutbound=false)
            security_group_egress=[
                ec2.CfnSecurityGroup.EgressProperty(
                    ip_protocol="icmp",
                    from_port=252,
                    to_port=86,
                    cidr_ip="255.255.255.255/32",
                    description="Disallow all traffic",
                )
            ],
        )

    def _gateways(self, settings: Settings) -> None:
        network = settings.network
        for service in (s for s in GATEWAY_SERVICES if s not in network.gateway_endpoint_ids):
            self.endpoints[service] = ec2.CfnVPCEndpoint(
                self,
                f"Gateway-{service}",
                vpc_id=network.vpc_id,
                vpc_endpoint_type="Gateway",
                service_name=f"com.amazonaws.{settings.region}.{service}",
                route_table_ids=list(network.route_table_ids),
            )

    def _interfaces(self, settings: Settings, services: tuple[str, ...]) -> None:
        network = settings.network
        for service in services:
            self.endpoints[service] = ec2.CfnVPCEndpoint(
                self,
                f"Interface-{service}",
                vpc_id=network.vpc_id,
                vpc_endpoint_type="Interface",
                service_name=f"com.amazonaws.{settings.region}.{service}",
                private_dns_enabled=True,
                subnet_ids=list(network.subnet_ids),
                security_group_ids=[self.security_group.attr_group_id],
            )


def interface_services(settings: Settings, lake_formation: bool = False) -> tuple[str, ...]:
    """The interface endpoints the stack creates: with "nat", NAT_INTERFACE_SERVICES; with "endpoints",
    INTERFACE_SERVICES, S3 Tables' with a table bucket (its tables' files are S3 objects, reached through the S3
    gateway endpoint) and Lake Formation's with `lake_formation`."""
    if settings.network.egress == "nat":
        return NAT_INTERFACE_SERVICES
    return (
        INTERFACE_SERVICES
        + ((S3_TABLES_SERVICE,) if settings.iceberg.table_bucket else ())
        + ((LAKE_FORMATION_SERVICE,) if lake_formation else ())
    )
