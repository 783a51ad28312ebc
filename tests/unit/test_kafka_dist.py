"""The test world's Kafka broker install (devtools/kafka_dist.py): the pinned jars are checked by name and digest,
and each line's pinned list agrees with the pom's version of that line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from devtools import kafka_dist, kafka_lines
from devtools.kafka_broker import cluster_id

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def test_every_jar_missing_extra_or_different_is_named():
    found = {"a.jar": "1", "b.jar": "2", "c.jar": "3"}
    pinned = {"a.jar": "1", "b.jar": "9", "d.jar": "4"}
    assert kafka_dist.mismatches(found, pinned) == [
        "d.jar: pinned, not resolved",
        "c.jar: resolved, not pinned",
        "b.jar: sha256 2, pinned 9",
    ]
    assert kafka_dist.mismatches(pinned, pinned) == []


@pytest.mark.parametrize("line", kafka_dist.LINES)
def test_each_line_pins_the_broker_of_its_profile(line):
    # given the pom's profile of the line
    profiles = ET.parse(kafka_dist.POM).getroot().findall("m:profiles/m:profile", POM_NS)
    profile = next(p for p in profiles if p.findtext("m:id", namespaces=POM_NS) == f"kafka-{line}")
    version = next(
        d.findtext("m:version", namespaces=POM_NS)
        for d in profile.iterfind(".//m:dependency", POM_NS)
        if d.findtext("m:artifactId", namespaces=POM_NS) == "kafka_2.13"
    )
    # then it is of the line, and the pinned digests hold its broker jar, each digest a sha256
    assert version.startswith(f"{line}.")
    pinned = kafka_dist.pinned(line)
    assert f"kafka_2.13-{version}.jar" in pinned
    assert all(re.fullmatch("[0-9a-f]{64}", digest) for digest in pinned.values())


def test_a_line_that_is_not_pinned_is_refused(monkeypatch):
    monkeypatch.setenv("KAFKA_VERSION", "2.8")
    with pytest.raises(ValueError, match="KAFKA_VERSION='2.8'"):
        kafka_lines.selected_line()


def test_a_cluster_id_is_as_kafka_writes_one():
    ids = {cluster_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch("[A-Za-z0-9_][A-Za-z0-9_-]{21}", text) for text in ids)
