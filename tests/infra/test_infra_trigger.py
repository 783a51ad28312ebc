"""The trigger as synthesized: each connector's rotation settings and job role in CONNECTORS, its backoff, and the
permissions its MSK event sources and its marker writes need."""
import json
from dataclasses import replace

import pytest

from infra.connectors import ROTATION_KEYS, lambda_environment
from infra.constructs.trigger import check_environment_size
from infra.errors import ConnectorSpecError
from sink_engine.config import parse_config
from tests.infra.test_infra_service import _actions, _env_vars, _rendered, _statements


def _connectors(env) -> list[dict]:
    return json.loads(_rendered(_env_vars(env.template("service"), "sink-trigger")["CONNECTORS"]))


def test_each_connector_entry_carries_its_rotation_settings_and_its_job_role(each_env):
    specs = {s.name: s for s in each_env.deployment.connectors}
    for entry in _connectors(each_env):
        config = parse_config(specs[entry["name"]].document)
        assert entry["rotation"] == {key: config[key] for key in ROTATION_KEYS}
        assert entry["role_arn"].startswith("<") and entry["role_arn"].endswith(".Arn>")


def test_shipped_connectors_set_a_scheduled_rotation_so_every_record_lands(each_env):
    for entry in _connectors(each_env):
        assert 0 < entry["rotation"]["rotate.schedule.interval.ms"] <= 600_000, entry["name"]


def test_trigger_backs_off_by_the_settings_and_has_no_record_thresholds(each_env):
    tuning = each_env.deployment.settings.trigger
    variables = _env_vars(each_env.template("service"), "sink-trigger")
    assert (variables["BACKOFF_BASE_MS"], variables["BACKOFF_CAP_MS"]) == (
        str(tuning.backoff_base_seconds * 1000), str(tuning.backoff_cap_seconds * 1000))
    assert not {"MIN_PENDING_RECORDS", "MAX_PENDING_AGE_MS"} & set(variables)


@pytest.mark.parametrize("count, fits", [(7, True), (8, False)])
def test_too_many_connectors_for_the_trigger_environment_fail_synthesis(dev, count, fits):
    spec = dev.deployment.connectors[0]
    specs = tuple(replace(spec, name=f"{spec.name}-{i:02d}") for i in range(count))
    environment = {**_env_vars(dev.template("service"), "sink-trigger"), "TABLE_NAME": "${Token[TOKEN.1]}",
                   "APPLICATION_ID": "${Token[TOKEN.2]}",
                   "CONNECTORS": lambda_environment(specs, "bucket", {s.name: "${Token[TOKEN.3]}" for s in specs})}
    environment = {name: _rendered(value) for name, value in environment.items()}
    if fits:
        check_environment_size(environment, "dev/*.json")
    else:
        with pytest.raises(ConnectorSpecError, match="over Lambda's 4096"):
            check_environment_size(environment, "dev/*.json")


def test_trigger_role_describes_the_cluster_configuration_and_batch_writes_markers(each_env):
    statements = _statements(each_env.template("service"), "sink-trigger")
    by_action = {a: s for s in statements for a in _actions(s)}
    assert by_action["kafka-cluster:DescribeClusterDynamicConfiguration"]["Resource"] == \
        each_env.deployment.settings.msk.cluster_arn
    assert "dynamodb:BatchWriteItem" in by_action
