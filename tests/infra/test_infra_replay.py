"""The DLQ replay Lambda of the service stack: code, layers, network, environment, least-privilege role, alarm,
output; and, for connectors with a dead-letter topic or S3 prefix, the grants on them (cdk-nag and cfn-lint clean)."""

import dataclasses
import json

import pytest

from infra.connectors import INDEX_KEY, index_uri, load_connectors
from infra.constructs.nag import logical_id
from infra.settings import load_settings

HANDLER = "lambdas.dlq_replay.handler.handler"


def _function(template) -> tuple[str, dict]:
    (found,) = [
        (k, fn)
        for k, fn in template.find_resources("AWS::Lambda::Function").items()
        if fn["Properties"]["Handler"] == HANDLER
    ]
    return found


def _statements(template) -> list[dict]:
    role = _function(template)[1]["Properties"]["Role"]["Fn::GetAtt"][0]
    return [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def _by_action(template) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for statement in _statements(template):
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        for action in actions:
            found.setdefault(action, []).append(statement)
    return found


def _resources(statements: list[dict]) -> list:
    return sorted(
        (r for s in statements for r in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])),
        key=json.dumps,
    )


def test_replay_function_runs_the_handler_in_the_msk_subnets(each_env):
    settings, template = each_env.deployment.settings, each_env.template("service")
    _, fn = _function(template)
    props = fn["Properties"]
    assert props["Runtime"] == "python3.14" and props["Architectures"] == ["arm64"] and props["Timeout"] == 900
    assert props["VpcConfig"] == {
        "SubnetIds": list(settings.network.subnet_ids),
        "SecurityGroupIds": list(settings.network.security_group_ids),
    }
    layers = template.find_resources("AWS::Lambda::LayerVersion")
    assert [layers[layer["Ref"]]["Properties"]["Description"] for layer in props["Layers"]] == [
        "aws-lambda-powertools and aws-xray-sdk",
        "confluent-kafka, orjson, aws-msk-iam-sasl-signer-python",
    ]
    variables = props["Environment"]["Variables"]
    # the trigger's connector index
    assert variables["CONNECTORS_URI"] == index_uri(settings.bucket_name) and "CONNECTORS" not in variables
    assert variables["POWERTOOLS_SERVICE_NAME"] == "sink-dlq-replay"


def test_replay_function_is_an_output_of_the_service_stack(each_env):
    logical, _ = _function(each_env.template("service"))
    assert each_env.templates["service"]["Outputs"]["ReplayFunctionName"]["Value"] == {"Ref": logical}
    assert logical_id(each_env.deployment.service.replay.function.node.default_child) == logical


def test_replay_errors_raise_an_alarm(each_env):
    logical, _ = _function(each_env.template("service"))
    alarms = each_env.template("service").find_resources("AWS::CloudWatch::Alarm")
    assert any(
        a["Properties"]["MetricName"] == "Errors"
        and a["Properties"]["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": logical}}]
        for a in alarms.values()
    )


def test_replay_role_reads_configs_keeps_progress_and_writes_the_connectors_topics(each_env):
    settings, connectors = each_env.deployment.settings, each_env.deployment.connectors
    by_action = _by_action(each_env.template("service"))
    bucket = f"arn:aws:s3:::{settings.bucket_name}"
    prefixes = sorted(c.dlq_s3_prefix for c in connectors if c.dlq_s3_prefix)
    assert _resources(by_action["s3:GetObject"]) == sorted(
        [f"{bucket}/{INDEX_KEY}"]
        + [f"{bucket}/{c.config_key}" for c in connectors]
        + [f"{bucket}/{p}/*" for p in prefixes]
    )
    (progress,) = by_action["dynamodb:PutItem"]
    assert sorted(progress["Action"]) == [
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ]
    assert progress["Condition"] == {
        "ForAllValues:StringEquals": {"dynamodb:LeadingKeys": sorted(c.name for c in connectors)}
    }
    assert _resources(by_action["kafka-cluster:WriteDataIdempotently"]) == [settings.msk.cluster_arn]
    assert _resources(by_action["kafka-cluster:Connect"]) == [settings.msk.cluster_arn]
    topics = sorted({t for c in connectors for t in c.topics})
    assert _resources(by_action["kafka-cluster:WriteData"]) == sorted(
        settings.msk.resource_arn("topic", t) for t in topics
    )
    assert [s["Action"] for s in _statements(each_env.template("service")) if "kms:Decrypt" in s["Action"]] == [
        "kms:Decrypt"
    ]
    # no connector of the checked-in environments dead-letters to a topic: no topic to read
    assert {"kafka-cluster:ReadData", "kafka-cluster:DescribeGroup"}.isdisjoint(by_action)
    assert ("s3:ListBucket" in by_action) == bool(prefixes)  # the dev sample dead-letters to its S3 prefix


@pytest.fixture(scope="module")
def with_dead_letters(tmp_path_factory):
    """dev's deployment with one connector dead-lettering to a topic and one to an S3 prefix."""
    from aws_cdk.assertions import Template

    from infra.application import build, new_app
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    (orders,) = load_connectors(load_settings("dev"))
    connectors = (
        dataclasses.replace(orders, topics=("orders",), dlq_topic="orders-dlq", dlq_s3_prefix=None),
        dataclasses.replace(
            orders, name="payments-s3-sink", topics=("payments",), dlq_s3_prefix="dlq/payments-s3-sink"
        ),
    )
    outdir = tmp_path_factory.mktemp("cdk-dlq")
    app = new_app(str(outdir))
    deployment = build(app, "dev", connectors)
    app.synth()
    path = outdir / f"{deployment.service.stack_name}.template.json"
    return deployment, outdir, path, Template.from_json(json.loads(path.read_text()))


def test_replay_role_reads_the_dead_letter_topics_and_prefixes(with_dead_letters):
    deployment, _, _, template = with_dead_letters
    msk, bucket = deployment.settings.msk, f"arn:aws:s3:::{deployment.settings.bucket_name}"
    by_action = _by_action(template)
    assert _resources(by_action["kafka-cluster:ReadData"]) == [msk.resource_arn("topic", "orders-dlq")]
    assert _resources(by_action["kafka-cluster:DescribeGroup"]) == [msk.resource_arn("group", "connect-orders-s3-sink")]
    assert f"{bucket}/dlq/payments-s3-sink/*" in _resources(by_action["s3:GetObject"])
    (listing,) = by_action["s3:ListBucket"]
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["dlq/payments-s3-sink/*"]}}


def test_dead_letter_grants_stay_nag_and_lint_clean(with_dead_letters):
    from cfnlint.api import ManualArgs, lint_file

    from tests.infra.test_infra_checks import CFN_LINT_IGNORED

    deployment, outdir, path, _ = with_dead_letters
    report = json.loads((outdir / "validation-report.json").read_text())
    assert [r for plugin in report["pluginReports"] for r in plugin.get("violations", [])] == []
    findings = lint_file(path, ManualArgs(regions=[deployment.settings.region], ignore_checks=CFN_LINT_IGNORED))
    assert [str(f) for f in findings] == []


def test_connector_files_without_brokers_deploy_with_the_clusters(each_env):
    """The example connector files carry no bootstrap.servers (a Kafka Connect worker setting): synthesis takes them
    since the environment names the cluster, whose brokers the job and the replay ask MSK for at run time."""
    settings, connectors = each_env.deployment.settings, each_env.deployment.connectors
    assert connectors and all("bootstrap.servers" not in c.document["config"] for c in connectors)
    assert all(c.brokers_from_cluster and c.config["bootstrap.servers"] == () for c in connectors)
    variables = _function(each_env.template("service"))[1]["Properties"]["Environment"]["Variables"]
    assert variables["SINK_MSK_CLUSTER_ARN"] == settings.msk.cluster_arn
    # kafka:GetBootstrapBrokers has no resource type in the Service Authorization Reference
    assert _resources(_by_action(each_env.template("service"))["kafka:GetBootstrapBrokers"]) == ["*"]
    assert f"spark.emr-serverless.driverEnv.SINK_MSK_CLUSTER_ARN={settings.msk.cluster_arn}" in (
        each_env.deployment.service.job.spark_parameters
    )
