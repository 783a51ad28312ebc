"""The network path from the job (EMR Serverless) and the replay Lambda, in `network.subnet_ids`, to the AWS APIs
they call: VPC endpoints the stack creates, or a NAT route the user states the subnets already have."""

from __future__ import annotations

from aws_cdk import Annotations, CfnOutput
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from infra.settings import GATEWAY_SERVICES, Settings

# S3 (data, configs, job artifacts) and DynamoDB (offsets) through gateway endpoints on the subnets' route tables
# (GATEWAY_SERVICES), created, or reused when `network.gateway_endpoint_ids` names one.
# The rest through interface endpoints in the subnets: STS, the Glue Schema Registry, CloudWatch Logs (the job's
# log group), CloudWatch (`monitoring`: each run's metrics, PutMetricData), KMS, Secrets Manager and SSM
# (`${secrets:...}` and `${ssm:...}` references), and Lambda + STS for the MSK event source's pollers (on-demand
# mode), which run in the cluster's VPC and, without a NAT, need both endpoints there, and SQS, where they send
# the batches they discard (the mappings' on-failure destination: "You must deploy a VPC endpoint for your
# on-failure destination service inside your Kafka cluster VPC", https://docs.aws.amazon.com/lambda/latest/dg/kafka-on-failure.html).
INTERFACE_SERVICES = ("sts", "glue", "logs", "monitoring", "kms", "secretsmanager", "ssm", "lambda", "sqs")
S3_TABLES_SERVICE = "s3tables"  # S3 Tables' Iceberg REST endpoint, when the settings name `iceberg.table_bucket`
HTTPS = 443


class JobNetwork(Construct):
    """Props: `settings` (its `region` and `network`: vpc_id, subnet_ids, security_group_ids, egress,
    route_table_ids).

    Attributes: `egress` ("nat" or "endpoints"); `endpoints` (service name -> CfnVPCEndpoint the stack creates,
    empty with "nat"); `reused` (service name -> the id of an existing gateway endpoint the subnets use instead);
    `security_group` (the interface endpoints' CfnSecurityGroup, admitting HTTPS from each of
    `network.security_group_ids` and sending nothing; None with "nat").

    "endpoints": gateway endpoints for GATEWAY_SERVICES on `network.route_table_ids` (except those
    `network.gateway_endpoint_ids` names: a route table takes a service's prefix-list route from one gateway
    endpoint only, so creating a second for a route table that has one fails the stack; a reused endpoint must be
    on the subnets' route tables and its policy must allow the job's calls, which synthesis cannot check), and
    interface endpoints with
    private DNS for `interface_services(settings)` in `network.subnet_ids`. The VPC must have DNS support and DNS
    hostnames enabled, the subnets must be in distinct Availability Zones (an interface endpoint takes one subnet
    per zone), and the VPC must not already have an interface endpoint with private DNS for one of these services
    (use "nat" and your own endpoints then). The MSK event source's pollers use the cluster's security groups: list
    them in `network.security_group_ids` for the endpoints to admit them.

    "nat": nothing is created; the subnets must route 0.0.0.0/0 to a NAT gateway. Synthesis says so (an info
    annotation that `cdk synth` prints), and both modes are recorded in the stack output `NetworkEgress`."""

    def __init__(self, scope: Construct, id: str, *, settings: Settings):
        super().__init__(scope, id)
        network = settings.network
        self.egress = network.egress
        self.endpoints: dict[str, ec2.CfnVPCEndpoint] = {}
        self.reused: dict[str, str] = dict(network.gateway_endpoint_ids)
        self.security_group: ec2.CfnSecurityGroup | None = None
        if network.egress == "nat":
            Annotations.of(self).add_info(
                f"network.egress is 'nat': no VPC endpoints are created; subnets {', '.join(network.subnet_ids)} "
                "must route to a NAT gateway to reach S3, DynamoDB, STS, Glue, CloudWatch Logs, CloudWatch, KMS, "
                "Secrets Manager, SSM and Lambda" + (", and S3 Tables" if settings.iceberg.table_bucket else "")
            )
            summary = "nat: the subnets reach AWS APIs through a NAT gateway (no endpoints created)"
        else:
            self._endpoints(settings)
            gateways = [f"{s} (reused {self.reused[s]})" if s in self.reused else s for s in GATEWAY_SERVICES]
            summary = f"endpoints: gateway {', '.join(gateways)}; interface {', '.join(interface_services(settings))}"
        CfnOutput(
            self,
            "Egress",
            key="NetworkEgress",
            value=summary,
            description="How the job and the replay Lambda reach AWS APIs (settings network.egress)",
        )

    def _endpoints(self, settings: Settings) -> None:
        network = settings.network
        self.security_group = ec2.CfnSecurityGroup(
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
        for service in (s for s in GATEWAY_SERVICES if s not in network.gateway_endpoint_ids):
            self.endpoints[service] = ec2.CfnVPCEndpoint(
                self,
                f"Gateway-{service}",
                vpc_id=network.vpc_id,
                vpc_endpoint_type="Gateway",
                service_name=f"com.amazonaws.{settings.region}.{service}",
                route_table_ids=list(network.route_table_ids),
            )
        for service in interface_services(settings):
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


def interface_services(settings: Settings) -> tuple[str, ...]:
    """The interface endpoints "endpoints" egress creates: INTERFACE_SERVICES, and S3 Tables' with a table bucket
    (its tables' files are S3 objects, reached through the S3 gateway endpoint)."""
    return INTERFACE_SERVICES + ((S3_TABLES_SERVICE,) if settings.iceberg.table_bucket else ())
