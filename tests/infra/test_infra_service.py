"""The stateless stack: EMR Serverless application and role, trigger, admin, alarms, catalog."""

import json

from aws_cdk.assertions import Match

from infra.constructs.trigger import trigger_group_id


def _env_vars(template, service: str) -> dict:
    for fn in template.find_resources("AWS::Lambda::Function").values():
        variables = fn["Properties"]["Environment"]["Variables"]
        if variables.get("POWERTOOLS_SERVICE_NAME") == service:
            return variables
    raise AssertionError(f"no function for {service}")


def _statements(template, service: str) -> list[dict]:
    """Statements of the IAM policies of the role of the function of Powertools service `service`."""
    roles = [
        fn["Properties"]["Role"]["Fn::GetAtt"][0]
        for fn in template.find_resources("AWS::Lambda::Function").values()
        if fn["Properties"]["Environment"]["Variables"].get("POWERTOOLS_SERVICE_NAME") == service
    ]
    return [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        if any(r.get("Ref") in roles for r in p["Properties"]["Roles"])
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def _rendered(value) -> str:
    """A template string value with `Fn::Join` joined and `Fn::GetAtt` shown as `<Logical.Attribute>`."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_rendered(p) for p in parts)
    if "Fn::GetAtt" in value:
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    return f"<{value.get('Ref')}>"


def _actions(statement) -> list[str]:
    return statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]


def test_emr_application_is_sized_started_and_networked(each_env):
    settings = each_env.deployment.settings
    each_env.template("service").has_resource_properties(
        "AWS::EMRServerless::Application",
        {
            "ReleaseLabel": settings.emr.release_label,
            "Type": "SPARK",
            "Architecture": settings.emr.architecture,
            "MaximumCapacity": {
                "Cpu": settings.emr.max_cpu,
                "Memory": settings.emr.max_memory,
                "Disk": settings.emr.max_disk,
            },
            "AutoStartConfiguration": {"Enabled": True},
            "AutoStopConfiguration": {"Enabled": True, "IdleTimeoutMinutes": settings.emr.idle_timeout_minutes},
            "NetworkConfiguration": {
                "SubnetIds": list(settings.network.subnet_ids),
                "SecurityGroupIds": list(settings.network.security_group_ids),
            },
        },
    )


def test_job_role_trusts_emr_serverless_of_this_account_only(each_env):
    each_env.template("service").has_resource_properties(
        "AWS::IAM::Role",
        {
            "AssumeRolePolicyDocument": {
                "Statement": [
                    {
                        "Action": "sts:AssumeRole",
                        "Effect": "Allow",
                        "Principal": {"Service": "emr-serverless.amazonaws.com"},
                        "Condition": {
                            "StringEquals": {"aws:SourceAccount": each_env.deployment.settings.account},
                            "ArnLike": Match.any_value(),
                        },
                    }
                ]
            }
        },
    )


def test_trigger_starts_the_archive_through_spark_archives(each_env):
    variables = _env_vars(each_env.template("service"), "sink-trigger")
    parameters = json.dumps(variables["SPARK_PARAMETERS"])
    assert "spark.archives=s3://" in parameters and "#environment" in parameters
    assert "PYSPARK_PYTHON=./environment/bin/python" in parameters
    connectors = _state(each_env)["index"]
    assert {c["name"] for c in connectors} == {s.name for s in each_env.deployment.connectors}
    assert all(
        c["config_uri"].startswith(f"s3://{each_env.deployment.settings.bucket_name}/_connectors/") for c in connectors
    )


def test_one_msk_event_source_per_topic(each_env):
    settings = each_env.deployment.settings
    mappings = each_env.template("service").find_resources("AWS::Lambda::EventSourceMapping")
    topics = sorted({t for c in each_env.deployment.connectors for t in c.topics})
    assert sorted(m["Properties"]["Topics"][0] for m in mappings.values()) == topics
    for m in mappings.values():
        props = m["Properties"]
        assert props["EventSourceArn"] == settings.msk.cluster_arn
        assert props["StartingPosition"] == "LATEST"
        group = props["AmazonManagedKafkaEventSourceConfig"]["ConsumerGroupId"]
        assert group == trigger_group_id(settings.env, props["Topics"][0])


def test_trigger_role_can_use_msk_with_iam(each_env):
    msk = each_env.deployment.settings.msk
    statements = _statements(each_env.template("service"), "sink-trigger")
    by_action = {a: s for s in statements for a in _actions(s)}
    assert by_action["kafka:DescribeClusterV2"]["Resource"] == msk.cluster_arn
    assert by_action["kafka-cluster:Connect"]["Resource"] == msk.cluster_arn
    topics = sorted({t for c in each_env.deployment.connectors for t in c.topics})
    read = by_action["kafka-cluster:ReadData"]["Resource"]
    assert sorted(read if isinstance(read, list) else [read]) == sorted(msk.resource_arn("topic", t) for t in topics)
    assert "kafka-cluster:AlterGroup" in by_action
    assert by_action["iam:PassRole"]["Condition"] == {
        "StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}
    }


def test_idle_flush_schedule_targets_the_trigger(each_env):
    minutes = each_env.deployment.settings.trigger.idle_flush_minutes
    each_env.template("service").has_resource_properties(
        "AWS::Events::Rule",
        {
            "ScheduleExpression": f"rate({minutes} minutes)",
            "Targets": [Match.object_like({"Input": json.dumps({"action": "idle-flush"}, separators=(",", ":"))})],
        },
    )


def test_lambdas_run_arm_python_with_tracing_and_powertools_layer(each_env):
    template = each_env.template("service")
    functions = template.find_resources("AWS::Lambda::Function")
    assert sorted(fn["Properties"]["Handler"] for fn in functions.values()) == [
        "lambdas.admin.handler.handler",
        "lambdas.app_stop.handler.handler",
        "lambdas.dlq_replay.handler.handler",
        "lambdas.trigger.handler.handler",
    ]
    layers = template.find_resources("AWS::Lambda::LayerVersion")
    powertools = next(
        k for k, v in layers.items() if v["Properties"]["Description"].startswith("aws-lambda-powertools")
    )
    for fn in functions.values():
        props = fn["Properties"]
        assert props["Runtime"] == "python3.14" and props["Architectures"] == ["arm64"]
        assert props["TracingConfig"] == {"Mode": "Active"} and props["Layers"][0] == {"Ref": powertools}
    assert len(layers) == 2  # Powertools for every function, the engine's libraries for the replay


def _state(env) -> dict:
    """The admin custom resource's State, role ARNs shown as `<Logical.Arn>`."""
    (resource,) = env.template("service").find_resources("Custom::SinkConnectors").values()
    return json.loads(_rendered(resource["Properties"]["State"]))


def test_admin_custom_resource_carries_the_published_configs_and_index(each_env):
    resources = each_env.template("service").find_resources("Custom::SinkConnectors")
    (resource,) = resources.values()
    assert resource["Properties"]["ServiceTimeout"] == "300"  # fail fast if the function dies before answering
    state = _state(each_env)
    assert [c["name"] for c in state["connectors"]] == [s.name for s in each_env.deployment.connectors]
    assert [c["config_key"] for c in state["connectors"]] == [s.config_key for s in each_env.deployment.connectors]
    assert state["index_key"] == "_connectors/_index.json"
    assert [c["name"] for c in state["index"]] == [s.name for s in each_env.deployment.connectors]


def test_admin_role_is_scoped_to_the_config_prefix(each_env):
    settings = each_env.deployment.settings
    by_action = {a: s for s in _statements(each_env.template("service"), "sink-admin") for a in _actions(s)}
    assert by_action["s3:PutObject"]["Resource"] == f"arn:aws:s3:::{settings.bucket_name}/_connectors/*"
    assert not [a for a in by_action if a.startswith("iam:") or "Lifecycle" in a]  # CloudFormation owns those


def test_each_connector_runs_under_its_own_job_role(each_env):
    template = each_env.template("service")
    roles = {c["name"]: c["role_arn"] for c in _state(each_env)["index"]}
    assert set(roles) == {s.name for s in each_env.deployment.connectors}
    assert len(set(roles.values())) == len(roles)
    job_roles = template.find_resources(
        "AWS::IAM::Role",
        {
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Statement": [Match.object_like({"Principal": {"Service": "emr-serverless.amazonaws.com"}})]
                }
            }
        },
    )
    for name, arn in roles.items():
        logical = arn.strip("<>").split(".")[0]
        assert {"Key": "connector", "Value": name} in job_roles[logical]["Properties"]["Tags"]
    pass_role = next(s for s in _statements(template, "sink-trigger") if "iam:PassRole" in _actions(s))
    resources = pass_role["Resource"] if isinstance(pass_role["Resource"], list) else [pass_role["Resource"]]
    assert sorted(_rendered(r) for r in resources) == sorted(roles.values())


def test_glue_tables_project_kafka_partitions(each_env):
    settings = each_env.deployment.settings
    tables = each_env.template("service").find_resources("AWS::Glue::Table")
    assert tables, "every environment declares columns for at least one topic"
    for table in tables.values():
        parameters = table["Properties"]["TableInput"]["Parameters"]
        assert parameters["projection.enabled"] == "true"
        assert parameters["projection.partition.range"] == f"0,{settings.kafka_partitions - 1}"
        assert parameters["storage.location.template"].endswith("/partition=${partition}/")


def test_outputs_name_every_function_the_application_the_dashboard_and_job_roles(each_env):
    outputs = each_env.templates["service"]["Outputs"]
    for name in (
        "ReplayFunctionName",
        "TriggerFunctionName",
        "AdminFunctionName",
        "ApplicationId",
        "DashboardName",
        "JobLogGroupName",
    ):
        assert name in outputs, name
    assert "--cli-read-timeout 900" in outputs["ReplayFunctionName"]["Description"]
    assert len([o for o in outputs if o.startswith("JobRole")]) == len(each_env.deployment.connectors)


def test_driver_and_executor_logs_go_to_the_job_log_group(each_env):
    # without logTypes EMR Serverless sends only the driver's: a failed task's traceback would be missing
    each_env.template("service").has_resource_properties(
        "AWS::EMRServerless::Application",
        {
            "MonitoringConfiguration": {
                "CloudWatchLoggingConfiguration": {
                    "Enabled": True,
                    "LogGroupName": Match.any_value(),
                    "LogTypeMap": [
                        {"Key": "SPARK_DRIVER", "Value": ["STDOUT", "STDERR"]},
                        {"Key": "SPARK_EXECUTOR", "Value": ["STDOUT", "STDERR"]},
                    ],
                }
            }
        },
    )
