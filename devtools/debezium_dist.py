"""Kafka Connect's worker and Debezium's Postgres connector for the CDC end-to-end test, installed from Maven Central
by the project's own pinned files (devtools/maven_parts.py).

`devtools/debezium/pom.xml` pins the versions (profile `connect`: connect-runtime at the test broker's line;
`debezium-postgres`: the connector without Kafka's jars); `devtools/debezium/<part>.sha256` pins the SHA-256 of every
jar each resolves to. The install puts the worker's jars in `<venv>/debezium/connect/libs` and the connector's in
`<venv>/debezium/plugins/debezium-connector-postgres`, a folder of the worker's `plugin.path` (Connect loads a
plugin's jars in a class loader of their own).

    python -m devtools.maven_dist install debezium     # what `make venv` runs (make debezium)
    python -m devtools.maven_dist lock debezium        # rewrites the pinned lists after a version change in the pom
"""

from __future__ import annotations

from pathlib import Path

from devtools.maven_parts import Bundle, MavenPartNotInstalled, Part

DEBEZIUM_DIR = Path(__file__).resolve().parent / "debezium"
POM = DEBEZIUM_DIR / "pom.xml"
PARTS = {"connect": "connect/libs", "debezium-postgres": "plugins/debezium-connector-postgres"}
BUNDLE = Bundle(
    "debezium",
    "Kafka Connect and Debezium",
    tuple(Part(folder, POM, DEBEZIUM_DIR / f"{part}.sha256", part) for part, folder in PARTS.items()),
)
DebeziumNotInstalled = MavenPartNotInstalled


def install_root() -> Path:
    return BUNDLE.default_root()


def installed() -> Path:
    """The install folder (`connect/libs`, `plugins/`), or DebeziumNotInstalled."""
    return BUNDLE.installed(install_root())


def pinned(part: str) -> dict[str, str]:
    return next(p for p in BUNDLE.parts if p.profile == part).pinned()
