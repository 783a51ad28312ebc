"""The peers of `make bench-peers`: sink connectors from Maven Central that users run in Kafka Connect, installed by
the project's pinned files (devtools/maven_parts.py) as folders of the worker's `plugin.path`.

`devtools/jvm/connect-peers/pom.xml` pins each peer (a profile) and `<peer>.sha256` beside it every jar the peer
resolves to; the install puts a peer's jars in `<venv>/connect-peers/plugins/<peer>`. The worker running them is
Kafka Connect 3.9.2 of the `debezium` bundle (devtools/debezium_dist.py). Only Apache Iceberg's sink is here: the
S3 sinks looked for are not served by Maven Central (docs/performance/peers.md says which and how it was checked).

    python -m devtools.maven_dist install connect-peers     # what `make venv` runs
    python -m devtools.maven_dist lock connect-peers        # rewrites the pinned lists after a version change
"""

from __future__ import annotations

from pathlib import Path

from devtools.maven_parts import JVM_DIR, Bundle, Part

POM_DIR = JVM_DIR / "connect-peers"
PEERS = ("iceberg",)
BUNDLE = Bundle(
    "connect-peers",
    "The peer sink connectors",
    tuple(Part(f"plugins/{peer}", POM_DIR / "pom.xml", POM_DIR / f"{peer}.sha256", peer) for peer in PEERS),
)


def plugins_dir() -> Path:
    """The folder to name in the worker's `plugin.path`, or MavenPartNotInstalled saying how to install it."""
    return BUNDLE.installed() / "plugins"
