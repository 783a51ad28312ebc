"""Kafka Connect's worker and Debezium's connector for tests/cdc (devtools/debezium_dist.py): each part's pinned
jars hold the versions its pom profile names, the plugin's none of Kafka's own (the worker serves them)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from devtools import debezium_dist

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


@pytest.mark.parametrize("part", debezium_dist.PARTS)
def test_each_part_pins_the_jars_of_its_profile(part):
    # given the pom's profile of the part
    profiles = ET.parse(debezium_dist.POM).getroot().findall("m:profiles/m:profile", POM_NS)
    profile = next(p for p in profiles if p.findtext("m:id", namespaces=POM_NS) == part)
    named = [
        (d.findtext("m:artifactId", namespaces=POM_NS), d.findtext("m:version", namespaces=POM_NS))
        for d in profile.iterfind("m:dependencies/m:dependency", POM_NS)
    ]
    # then the pinned digests hold each named jar, each digest a sha256
    pinned = debezium_dist.pinned(part)
    assert all(f"{artifact}-{version}.jar" in pinned for artifact, version in named)
    assert all(re.fullmatch("[0-9a-f]{64}", digest) for digest in pinned.values())


def test_the_plugin_holds_none_of_kafkas_jars_and_the_worker_is_of_the_brokers_line():
    plugin, worker = debezium_dist.pinned("debezium-postgres"), debezium_dist.pinned("connect")
    assert not [jar for jar in plugin if jar.startswith(("kafka-clients-", "connect-"))]
    assert "connect-runtime-3.9.2.jar" in worker and "debezium-connector-postgres-3.6.1.Final.jar" in plugin


def test_a_missing_install_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(debezium_dist, "install_root", lambda: tmp_path / "debezium")
    with pytest.raises(debezium_dist.DebeziumNotInstalled, match="make venv"):
        debezium_dist.installed()
