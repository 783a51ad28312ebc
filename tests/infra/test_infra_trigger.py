"""The trigger as synthesized: each connector's rotation settings and job role in the connector index the admin
publishes, the index's URI in its environment (and nothing that grows with the connectors), its backoff, and the
permissions its index read, its MSK event sources and its marker writes need."""

import json

from infra.connectors import INDEX_KEY, ROTATION_KEYS, SIZING_KEYS, index_uri
from infra.constructs.nag import logical_id
from tests.infra.test_infra_service import _actions, _env_vars, _rendered, _statements


def _index(env) -> list[dict]:
    """The connector index in the admin's State, role ARNs shown as `<Logical.Arn>`."""
    (resource,) = env.template("service").find_resources("Custom::SinkConnectors").values()
    return json.loads(_rendered(resource["Properties"]["State"]))["index"]


def test_each_connector_entry_carries_its_rotation_and_sizing_settings_and_its_job_role(each_env):
    specs = {s.name: s for s in each_env.deployment.connectors}
    index = _index(each_env)
    assert [entry["name"] for entry in index] == list(specs)
    for entry in index:
        config = specs[entry["name"]].config
        assert entry["rotation"] == {key: config[key] for key in ROTATION_KEYS}
        assert entry["sizing"] == {key: config[key] for key in SIZING_KEYS}
        assert entry["role_arn"].startswith("<") and entry["role_arn"].endswith(".Arn>")


def test_shipped_connectors_set_a_scheduled_rotation_so_every_record_lands(each_env):
    for entry in _index(each_env):
        assert 0 < entry["rotation"]["rotate.schedule.interval.ms"] <= 600_000, entry["name"]


def test_trigger_reads_the_index_and_may_read_that_object_only(each_env):
    settings, template = each_env.deployment.settings, each_env.template("service")
    variables = _env_vars(template, "sink-trigger")
    assert variables["CONNECTORS_URI"] == index_uri(settings.bucket_name)
    assert "CONNECTORS" not in variables
    statements = _statements(template, "sink-trigger")
    assert [s["Resource"] for s in statements if "s3:GetObject" in _actions(s)] == [
        f"arn:aws:s3:::{settings.bucket_name}/{INDEX_KEY}"
    ]
    assert not [s for s in statements for a in _actions(s) if a.startswith("s3:") and a != "s3:GetObject"]
    (decrypt,) = [s for s in statements if "kms:Decrypt" in _actions(s)]
    assert _actions(decrypt) == ["kms:Decrypt"] and "DataLakeKey" in json.dumps(decrypt["Resource"])


def test_the_trigger_and_its_event_sources_wait_for_the_published_index(each_env):
    resources = each_env.templates["service"]["Resources"]
    (admin,) = [k for k, r in resources.items() if r["Type"] == "Custom::SinkConnectors"]
    trigger = {k: r for k, r in resources.items() if k.startswith("Trigger")}
    assert {"AWS::Lambda::Function", "AWS::Lambda::EventSourceMapping", "AWS::Events::Rule"} <= {
        r["Type"] for r in trigger.values()
    }
    assert [k for k, r in trigger.items() if admin not in r.get("DependsOn", [])] == []


def test_trigger_backs_off_by_the_settings_and_has_no_record_thresholds(each_env):
    tuning = each_env.deployment.settings.trigger
    variables = _env_vars(each_env.template("service"), "sink-trigger")
    assert (variables["BACKOFF_BASE_MS"], variables["BACKOFF_CAP_MS"]) == (
        str(tuning.backoff_base_seconds * 1000),
        str(tuning.backoff_cap_seconds * 1000),
    )
    assert not {"MIN_PENDING_RECORDS", "MAX_PENDING_AGE_MS"} & set(variables)
    # the connectors one triggered run serves at most: the default, as no shipped environment sets it
    assert variables["CONNECTORS_PER_RUN"] == str(tuning.connectors_per_run) == "25"


def test_trigger_role_describes_the_cluster_configuration_and_batch_writes_markers(each_env):
    statements = _statements(each_env.template("service"), "sink-trigger")
    by_action = {a: s for s in statements for a in _actions(s)}
    assert (
        by_action["kafka-cluster:DescribeClusterDynamicConfiguration"]["Resource"]
        == each_env.deployment.settings.msk.cluster_arn
    )
    assert "dynamodb:BatchWriteItem" in by_action


def test_trigger_knows_the_applications_maximum_capacity_which_bounds_each_runs_workers(each_env):
    emr = each_env.deployment.settings.emr
    variables = _env_vars(each_env.template("service"), "sink-trigger")
    assert (variables["MAX_CPU"], variables["MAX_MEMORY"], variables["MAX_DISK"]) == (
        emr.max_cpu,
        emr.max_memory,
        emr.max_disk,
    )


def test_a_batch_the_trigger_keeps_failing_on_is_discarded_to_a_queue_and_raises_an_alarm(each_env):
    # an MSK event source retries a failed batch for ever by default (MaximumRetryAttempts -1, "All Amazon MSK event
    # source configuration parameters in Lambda"); with an on-failure destination Lambda stops after 10 retries
    # ("Configuring error handling controls for Kafka event sources") and describes the batch there
    template = each_env.templates["service"]
    trigger = each_env.deployment.service.trigger
    queue_id = logical_id(trigger.discarded.node.default_child)
    queue = template["Resources"][queue_id]["Properties"]
    settings = each_env.deployment.settings
    assert queue["QueueName"] == f"sink-{settings.env}-trigger-discarded-batches"
    assert queue["SqsManagedSseEnabled"] is True and queue["MessageRetentionPeriod"] == 14 * 86400
    mappings = [
        r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    assert mappings and all(
        m["DestinationConfig"] == {"OnFailure": {"Destination": {"Fn::GetAtt": [queue_id, "Arn"]}}} for m in mappings
    )
    # on-demand pollers: retries are bounded by the destination, bisecting and MaximumRetryAttempts being
    # provisioned mode's (provisioned pollers bill per mapping)
    assert not any(
        {"MaximumRetryAttempts", "BisectBatchOnFunctionError", "ProvisionedPollerConfig"} & set(m) for m in mappings
    )
    # the trigger's role (the mappings' execution role) may send there, and nothing else of SQS (the destination
    # needs sqs:SendMessage, "Capturing discarded batches ...")
    statements = [
        st
        for r in template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for st in r["Properties"]["PolicyDocument"]["Statement"]
        if {"Ref": logical_id(trigger.function.role.node.default_child)} in r["Properties"]["Roles"]
    ]
    assert any(
        st["Action"] == "sqs:SendMessage" and st["Resource"] == {"Fn::GetAtt": [queue_id, "Arn"]} for st in statements
    )
    assert {
        a
        for st in statements
        for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])
        if a.startswith("sqs:")
    } == {"sqs:SendMessage"}
    # and a batch in the queue raises the TriggerBatchesDiscarded alarm
    alarm = each_env.deployment.service.monitoring.alarms["TriggerBatchesDiscarded"].node.default_child
    alarm = template["Resources"][logical_id(alarm)]["Properties"]
    assert (alarm["MetricName"], alarm["Threshold"], alarm["Dimensions"]) == (
        "ApproximateNumberOfMessagesVisible",
        1,
        [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue_id, "QueueName"]}}],
    )
    assert alarm["AlarmActions"]
