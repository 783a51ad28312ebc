"""The pinned Maven bundles (devtools/maven_parts.py, devtools/maven_dist.py): each part's lock holds the jars its
pom names, and an install moves a bundle into place only when every jar matches its lock."""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from devtools import maven_dist, maven_parts
from devtools.maven_parts import Bundle, MavenPartNotInstalled, Part

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
PARTS = [(bundle.name, part) for bundle in maven_dist.bundles().values() for part in bundle.parts]


def _named_jars(part: Part) -> list[str]:
    """`<artifactId>-<version>.jar` of each dependency the part's pom (its profile) names, properties filled in."""
    root = ET.parse(part.pom).getroot()
    properties = {p.tag.split("}")[1]: p.text for p in root.findall("m:properties/*", POM_NS)}
    scope = root
    if part.profile:
        scope = next(
            p
            for p in root.iterfind("m:profiles/m:profile", POM_NS)
            if p.findtext("m:id", namespaces=POM_NS) == part.profile
        )
    jars = []
    for dependency in scope.iterfind("m:dependencies/m:dependency", POM_NS):
        version = re.sub(
            r"\$\{([^}]+)\}", lambda m: properties[m.group(1)], dependency.findtext("m:version", namespaces=POM_NS)
        )
        jars.append(f"{dependency.findtext('m:artifactId', namespaces=POM_NS)}-{version}.jar")
    return jars


@pytest.mark.parametrize(("bundle", "part"), PARTS, ids=[f"{name}:{part.folder}" for name, part in PARTS])
def test_each_part_pins_the_jars_its_pom_names(bundle, part):
    pinned = part.pinned()
    assert all(jar in pinned for jar in _named_jars(part)), f"{bundle}: {part.lock} misses a jar of {part.pom}"
    assert all(re.fullmatch("[0-9a-f]{64}", digest) for digest in pinned.values())


def _bundle_resolving_to(tmp_path: Path, monkeypatch, pinned_digest: str) -> Bundle:
    """A bundle of one part whose Maven resolves to one jar `a.jar` (b"a"), pinned as `pinned_digest`."""
    lock = tmp_path / "libs.sha256"
    lock.write_text(f"{pinned_digest}  a.jar\n")

    def resolve(pom: Path, into: Path, profile: str | None = None) -> None:
        into.mkdir(parents=True)
        (into / "a.jar").write_bytes(b"a")

    monkeypatch.setattr(maven_parts, "resolve", resolve)
    return Bundle("thing", "The thing", (Part("libs", tmp_path / "pom.xml", lock),))


def test_a_jar_of_another_digest_is_named_and_nothing_is_installed(tmp_path, monkeypatch):
    # given a lock pinning a.jar with another digest
    bundle = _bundle_resolving_to(tmp_path, monkeypatch, "0" * 64)
    # when installing, then the jar is named and neither the bundle nor its staging folder is left
    with pytest.raises(RuntimeError, match="a.jar: sha256 .*, pinned 0{64}"):
        bundle.install(tmp_path / "venv" / "thing")
    assert list((tmp_path / "venv").iterdir()) == []


def test_matching_jars_are_installed_and_found(tmp_path, monkeypatch):
    bundle = _bundle_resolving_to(tmp_path, monkeypatch, hashlib.sha256(b"a").hexdigest())
    root = bundle.install(tmp_path / "venv" / "thing")
    assert bundle.installed(root) == root and (root / "libs" / "a.jar").read_bytes() == b"a"


def test_a_missing_install_says_how_to_install(tmp_path):
    bundle = maven_dist.bundles()["connect-json"]
    with pytest.raises(MavenPartNotInstalled, match="make venv.*maven_dist install connect-json"):
        bundle.installed(tmp_path / "connect-json")
