"""The restore settings (`restore.connectors.<name>.target_topics`): validated when the environment is read and
its connectors loaded, naming the setting at fault; carried by the connector's spec and its connector index entry,
which the job role's grants and the trigger's checks follow."""

from __future__ import annotations

import copy
import json

import pytest

from infra.connectors import connector_index, load_connectors
from infra.errors import SettingsError
from infra.settings import ENVIRONMENTS_DIR, load_settings, parse_settings
from lambdas.trigger.restore import target_allowed

DEV = json.loads((ENVIRONMENTS_DIR / "dev.json").read_text())


def _restore(connectors) -> dict:
    return {**copy.deepcopy(DEV), "restore": {"connectors": connectors}}


@pytest.mark.parametrize(
    "restore, setting",
    [
        ({"connectors": {"orders-s3-sink": ["orders.restored"]}}, "restore.connectors.orders-s3-sink"),
        ({"connectors": {"orders-s3-sink": {"targets": ["orders.restored"]}}}, "restore.connectors.orders-s3-sink"),
        ({"connectors": {"orders-s3-sink": {"target_topics": []}}}, "restore.connectors.orders-s3-sink.target_topics"),
        (
            {"connectors": {"orders-s3-sink": {"target_topics": ["*"]}}},
            "restore.connectors.orders-s3-sink.target_topics",
        ),
        (
            {"connectors": {"orders-s3-sink": {"target_topics": ["a*b"]}}},
            "restore.connectors.orders-s3-sink.target_topics",
        ),
        (
            {"connectors": {"orders-s3-sink": {"target_topics": ["x", "x"]}}},
            "restore.connectors.orders-s3-sink.target_topics",
        ),
        ({"connectors": {"bad name!": {"target_topics": ["x"]}}}, "restore.connectors.bad name!"),
        ({"targets": {}}, "restore.targets"),
    ],
)
def test_a_malformed_restore_setting_is_named(restore, setting):
    with pytest.raises(SettingsError) as failed:
        parse_settings("dev", {**copy.deepcopy(DEV), "restore": restore}, "dev.json")
    assert failed.value.setting == setting


def test_without_the_section_no_connector_has_restore_targets():
    settings = parse_settings("dev", {k: v for k, v in DEV.items() if k != "restore"}, "dev.json")
    assert all(spec.restore_targets == () for spec in load_connectors(settings))


@pytest.mark.parametrize(
    "patterns, topic, allowed",
    [
        (("orders.restored",), "orders.restored", True),
        (("orders.restored",), "orders.restored.2", False),
        (("orders.restored*",), "orders.restored", True),
        (("orders.restored*",), "orders.restored.2026-11-25", True),
        (("orders.restored*",), "orders", False),
        ((), "orders.restored", False),
    ],
)
def test_a_target_is_allowed_by_name_or_by_prefix(patterns, topic, allowed):
    assert target_allowed(patterns, topic) is allowed


def test_the_dev_connector_carries_its_targets_into_its_index_entry():
    settings = load_settings("dev")
    (spec,) = load_connectors(settings)
    assert spec.restore_targets == ("orders.restored*", "payments.restored*")
    (entry,) = connector_index((spec,), settings.bucket_name, {spec.name: "arn:aws:iam::1:role/job"})
    assert entry["restore_targets"] == ["orders.restored*", "payments.restored*"]


def test_a_target_for_a_connector_not_deployed_fails_synthesis():
    settings = parse_settings("dev", _restore({"gone-sink": {"target_topics": ["orders.restored"]}}), "dev.json")
    with pytest.raises(SettingsError, match="setting 'restore.connectors.gone-sink'.*names no connector"):
        load_connectors(settings)


@pytest.mark.parametrize("target, topic", [("orders", "orders"), ("pay*", "payments")])
def test_a_target_that_takes_in_a_topic_a_connector_reads_is_refused(target, topic):
    settings = parse_settings("dev", _restore({"orders-s3-sink": {"target_topics": [target]}}), "dev.json")
    with pytest.raises(SettingsError, match=f"'restore.connectors.orders-s3-sink.target_topics'.*takes in '{topic}'"):
        load_connectors(settings)
