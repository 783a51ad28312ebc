"""The pinned Maven bundles by name, and the command line that installs or locks one (devtools/maven_parts.py does
the work; each bundle is declared beside the code that uses it).

    python -m devtools.maven_dist install debezium [--into DIR]   # what `make venv` runs per bundle
    python -m devtools.maven_dist lock debezium                   # rewrites its .sha256 lists after a pom change
"""

from __future__ import annotations

import argparse
from pathlib import Path

from devtools import connect_peers_dist, debezium_dist, iceberg_spark_dist, jvm_oracles
from devtools.maven_parts import Bundle


def bundles() -> dict[str, Bundle]:
    """Every bundle by name."""
    declared = [debezium_dist.BUNDLE, iceberg_spark_dist.BUNDLE, *jvm_oracles.BUNDLES, connect_peers_dist.BUNDLE]
    return {bundle.name: bundle for bundle in declared}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.maven_dist", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("install", "lock"))
    parser.add_argument("bundle", choices=sorted(bundles()))
    parser.add_argument("--into", type=Path, help="install there instead of the venv's folder (install only)")
    args = parser.parse_args(argv)
    bundle = bundles()[args.bundle]
    if args.action == "install":
        print(bundle.install(args.into.resolve() if args.into else None))
    else:
        bundle.lock()
        print(", ".join(str(part.lock) for part in bundle.parts))


if __name__ == "__main__":
    main()
