"""The trigger as synthesized: each connector's rotation settings and job role in the connector index the admin
publishes, the index's URI in its environment (and nothing that grows with the connectors), its backoff, and the
permissions its index read, its MSK event sources and its marker writes need."""
import json

from infra.connectors import INDEX_KEY, ROTATION_KEYS, SIZING_KEYS, index_uri
from sink_engine.config import parse_config
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
        config = parse_config(specs[entry["name"]].document)
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
        f"arn:aws:s3:::{settings.bucket_name}/{INDEX_KEY}"]
    assert not [s for s in statements for a in _actions(s) if a.startswith("s3:") and a != "s3:GetObject"]
    (decrypt,) = [s for s in statements if "kms:Decrypt" in _actions(s)]
    assert _actions(decrypt) == ["kms:Decrypt"] and "DataLakeKey" in json.dumps(decrypt["Resource"])


def test_the_trigger_and_its_event_sources_wait_for_the_published_index(each_env):
    resources = each_env.templates["service"]["Resources"]
    (admin,) = [k for k, r in resources.items() if r["Type"] == "Custom::SinkConnectors"]
    trigger = {k: r for k, r in resources.items() if k.startswith("Trigger")}
    assert {"AWS::Lambda::Function", "AWS::Lambda::EventSourceMapping", "AWS::Events::Rule"} <= \
        {r["Type"] for r in trigger.values()}
    assert [k for k, r in trigger.items() if admin not in r.get("DependsOn", [])] == []


def test_trigger_backs_off_by_the_settings_and_has_no_record_thresholds(each_env):
    tuning = each_env.deployment.settings.trigger
    variables = _env_vars(each_env.template("service"), "sink-trigger")
    assert (variables["BACKOFF_BASE_MS"], variables["BACKOFF_CAP_MS"]) == (
        str(tuning.backoff_base_seconds * 1000), str(tuning.backoff_cap_seconds * 1000))
    assert not {"MIN_PENDING_RECORDS", "MAX_PENDING_AGE_MS"} & set(variables)


def test_trigger_role_describes_the_cluster_configuration_and_batch_writes_markers(each_env):
    statements = _statements(each_env.template("service"), "sink-trigger")
    by_action = {a: s for s in statements for a in _actions(s)}
    assert by_action["kafka-cluster:DescribeClusterDynamicConfiguration"]["Resource"] == \
        each_env.deployment.settings.msk.cluster_arn
    assert "dynamodb:BatchWriteItem" in by_action


def test_trigger_knows_the_applications_maximum_capacity_which_bounds_each_runs_workers(each_env):
    emr = each_env.deployment.settings.emr
    variables = _env_vars(each_env.template("service"), "sink-trigger")
    assert (variables["MAX_CPU"], variables["MAX_MEMORY"], variables["MAX_DISK"]) == (
        emr.max_cpu, emr.max_memory, emr.max_disk)
