"""Iceberg's Java reader for the tests, installed from Maven Central by the project's own pinned files
(devtools/maven_parts.py).

`devtools/jvm/iceberg-spark/pom.xml` pins the jars: Iceberg's Spark runtime for the project's pyspark, its AWS
bundle (S3FileIO, the Glue catalog) and the SQLite JDBC driver (the SQL catalog). `libs.sha256` beside it pins the
SHA-256 of each. The install puts them in `<venv>/iceberg-spark/libs`, where `libs_dir()` finds them
(tests/iceberg/spark_reader.py puts them on its Spark session's classpath).

    python -m devtools.maven_dist install iceberg-spark     # what `make venv` runs
    python -m devtools.maven_dist lock iceberg-spark        # rewrites the pinned list after a version change in the pom
"""

from __future__ import annotations

from pathlib import Path

from devtools.maven_parts import JVM_DIR, Bundle, MavenPartNotInstalled, Part

POM_DIR = JVM_DIR / "iceberg-spark"
BUNDLE = Bundle(
    "iceberg-spark", "Iceberg's Spark runtime", (Part("libs", POM_DIR / "pom.xml", POM_DIR / "libs.sha256"),)
)
IcebergSparkNotInstalled = MavenPartNotInstalled


def libs_dir() -> Path:
    """The installed jars, for Spark's `spark.jars`."""
    return BUNDLE.installed() / "libs"
