"""A deployed job's Kafka brokers, from the environment's MSK cluster when no setting names them.

A connector file as published carries no `bootstrap.servers` (a Kafka Connect worker setting); the stack names the
cluster (`msk.cluster_arn`, passed to the job as SINK_MSK_CLUSTER_ARN: config/worker.py), and the job asks MSK for
its bootstrap brokers ("GetBootstrapBrokers", Amazon MSK API Reference,
https://docs.aws.amazon.com/msk/1.0/apireference/clusters-clusterarn-bootstrap-brokers.html; IAM action
`kafka:GetBootstrapBrokers` on the cluster, which the job role is granted: infra/job_policy.py). Of the strings the
answer holds, the one of the listener the client's authentication speaks (MSK's ports: "Port information",
https://docs.aws.amazon.com/msk/latest/developerguide/port-info.html): plaintext 9092, TLS 9094, SASL/SCRAM 9096,
IAM 9098, the private ones (the job runs in the cluster's VPC)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import KafkaClient
from sink_engine.config import SinkConfig
from sink_engine.errors import AwsCallError, ConfigError
from sink_engine.source.client_config import kafka_authentication
from sink_engine.source.settings import SourceSettings

# (security.protocol, SASL mechanism or "") -> the GetBootstrapBrokers field of that listener's brokers
LISTENERS = {
    ("PLAINTEXT", ""): "BootstrapBrokerString",
    ("SSL", ""): "BootstrapBrokerStringTls",
    ("SASL_SSL", "SCRAM-SHA-512"): "BootstrapBrokerStringSaslScram",
    ("SASL_SSL", "OAUTHBEARER"): "BootstrapBrokerStringSaslIam",  # MSK IAM (source/kafka_auth.py)
}


def needs_cluster_brokers(config: SinkConfig) -> bool:
    """Whether `config`'s brokers are the MSK cluster's, still to be asked for."""
    return not SourceSettings.from_config(config).bootstrap_servers and config.worker.cluster_arn is not None


def with_cluster_brokers(config: SinkConfig, kafka_client_for: Callable[[str], KafkaClient]) -> SinkConfig:
    """`config` itself when it names its brokers; else with the brokers MSK gives for its worker's cluster and its
    client's listener (`kafka_client_for(region)`: a boto3 "kafka" client). ConfigError naming `bootstrap.servers`
    when the cluster has no listener for that authentication; AwsCallError when the call fails."""
    if not needs_cluster_brokers(config):
        return config
    arn = config.worker.cluster_arn
    assert arn is not None  # needs_cluster_brokers
    auth = kafka_authentication(SourceSettings.from_config(config))
    listener = (auth.get("security.protocol", "PLAINTEXT").upper(), auth.get("sasl.mechanisms", "").upper())
    field = LISTENERS.get(listener)
    if field is None:
        raise ConfigError(
            "bootstrap.servers",
            f"MSK has no listener for {' with '.join(p for p in listener if p)} (it has plaintext, TLS, SASL/SCRAM "
            f"with SCRAM-SHA-512, and IAM); name the brokers of cluster {arn} in the worker settings",
        )
    try:
        answer = kafka_client_for(arn.split(":")[3]).get_bootstrap_brokers(ClusterArn=arn)
    except ClientError as e:
        error = e.response.get("Error", {})
        raise AwsCallError("GetBootstrapBrokers", str(error.get("Code", "?")), error.get("Message", str(e))) from e
    except BotoCoreError as e:
        raise AwsCallError("GetBootstrapBrokers", type(e).__name__, str(e)) from e
    brokers = answer.get(field)
    if not brokers:
        raise ConfigError(
            "bootstrap.servers",
            f"MSK cluster {arn} has no {field} (its {listener[0]} listener is off): turn that authentication on for "
            "the cluster, or set the connector's security settings to one it has",
        )
    return replace(config, values={**config.values, "bootstrap.servers": tuple(brokers.split(","))})


def kafka_client(region: str) -> KafkaClient:
    """The boto3 MSK client of `region` (AWS_ENDPOINT_URL* applies, as to every client here)."""
    import boto3

    return boto3.client("kafka", region_name=region)
