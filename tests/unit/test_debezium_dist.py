"""Kafka Connect's worker and Debezium's connector for tests/cdc (devtools/debezium_dist.py): the plugin's pinned
jars hold none of Kafka's own (the worker serves them); tests/unit/test_maven_dist.py checks each part's pins."""

from __future__ import annotations

import pytest

from devtools import debezium_dist


def test_the_plugin_holds_none_of_kafkas_jars_and_the_worker_is_of_the_brokers_line():
    plugin, worker = debezium_dist.pinned("debezium-postgres"), debezium_dist.pinned("connect")
    assert not [jar for jar in plugin if jar.startswith(("kafka-clients-", "connect-"))]
    assert "connect-runtime-3.9.2.jar" in worker and "debezium-connector-postgres-3.6.1.Final.jar" in plugin


def test_a_missing_install_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(debezium_dist, "install_root", lambda: tmp_path / "debezium")
    with pytest.raises(debezium_dist.DebeziumNotInstalled, match="make venv"):
        debezium_dist.installed()
