"""Kafka Connect's own code as the tests' oracles, installed from Maven Central by the project's pinned files
(devtools/maven_parts.py): `connect-json` (Kafka's JsonConverter, tests/connect_json_oracle.py) and
`connect-transforms` (Kafka Connect's transforms, JsonConverter and Debezium's ExtractNewRecordState,
tests/connect_transforms_oracle.py), each a pom under devtools/jvm/<name>/ with `libs.sha256` beside it, installed
into `<venv>/<name>/libs`.

    python -m devtools.maven_dist install connect-json          # what `make venv` runs (and connect-transforms)
"""

from __future__ import annotations

from devtools.maven_parts import JVM_DIR, Bundle, Part


def _oracle(name: str, what: str) -> Bundle:
    return Bundle(name, what, (Part("libs", JVM_DIR / name / "pom.xml", JVM_DIR / name / "libs.sha256"),))


BUNDLES = (
    _oracle("connect-json", "Kafka's JsonConverter"),
    _oracle("connect-transforms", "Kafka Connect's transforms"),
)
