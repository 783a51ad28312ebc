"""A third Iceberg reader for the tests: Iceberg's Java reader, Spark with `iceberg-spark-runtime` (the project's
pyspark, the jars of devtools/jvm/iceberg-spark/pom.xml that `make venv` installs), reading a table through the
Java client of the catalog the connector writes to (JdbcCatalog on the SQL catalog's SQLite file, GlueCatalog on
moto's Glue, RESTCatalog), its files through S3FileIO on moto's S3.

The reader is a Python process of its own with its own JVM (the tests' Spark session is the engine's, whose
classpath must stay the engine's), started once and kept: each request is a line of JSON on its stdin (the catalog's
name and pyiceberg properties, a table), each answer a line of JSON on its stdout (the path of an Arrow IPC file of
the rows, Spark's schema of the table, or the error). Each request reads in a new Spark session (`newSession()`: its
own catalogs, so a catalog name may point at another catalog from one request to the next)."""

from __future__ import annotations

import atexit
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

from devtools.iceberg_spark_dist import libs_dir

_SCRIPT = r"""
import json, sys
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

jars, out = sys.argv[1:3]
spark = (SparkSession.builder.master("local[1]").appName("iceberg-java-reader").config("spark.jars", jars)
         .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.memory", "512m").config("spark.sql.shuffle.partitions", "1").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
print(json.dumps({"ready": True}), flush=True)
for n, line in enumerate(sys.stdin):
    request = json.loads(line)
    try:
        session = spark.newSession()
        name = request["catalog"]
        for key, value in request["properties"].items():
            session.conf.set(f"spark.sql.catalog.{name}{'.' + key if key else ''}", value)
        frame = session.read.table(f"`{name}`." + ".".join(f"`{p}`" for p in request["table"].split(".")))
        path = f"{out}/{n}.arrow"
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, to_arrow_schema(frame.schema)) as writer:
            for batch in frame._collect_as_arrow():
                writer.write_batch(batch)
        print(json.dumps({"arrow": path, "schema": frame.schema.jsonValue()}), flush=True)
    except Exception as e:
        print(json.dumps({"error": f"{type(e).__name__}: {e}"[:4000]}), flush=True)
"""


class SparkReaderError(AssertionError):
    """Spark's Iceberg reader could not read a table: the message names it and Spark's error."""


class SparkIcebergReader:
    """The reader process; `read(catalog, properties, identifier)` -> (Arrow table, Spark's schema as JSON)."""

    def __init__(self):
        self._folder = tempfile.TemporaryDirectory(prefix="iceberg-java-reader-")
        jars = ",".join(str(jar) for jar in sorted(libs_dir().glob("*.jar")))
        with open(Path(self._folder.name) / "stderr", "wb") as stderr:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _SCRIPT, jars, self._folder.name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYSPARK_SUBMIT_ARGS": "pyspark-shell"},
            )
        self._requests, self._started = 0, False  # (Spark starts while the test goes on; the first read waits)

    def read(self, catalog: str, properties: dict[str, str], identifier: str) -> tuple[pa.Table, dict]:
        """Table `identifier` of the catalog that pyiceberg's `load_catalog(catalog, **properties)` opens."""
        assert self._process.stdin is not None
        if not self._started:
            self._answer("starting Spark")
            self._started = True
        self._requests += 1
        scratch = Path(self._folder.name) / f"catalog-{self._requests}.db"
        name, java = java_catalog(catalog, properties, scratch)
        self._process.stdin.write(json.dumps({"catalog": name, "properties": java, "table": identifier}) + "\n")
        self._process.stdin.flush()
        answer = self._answer(f"reading {identifier}")
        with pa.memory_map(answer["arrow"]) as source:
            rows = pa.ipc.open_file(source).read_all()
        os.unlink(answer["arrow"])
        scratch.unlink(missing_ok=True)
        return rows, answer["schema"]

    def _answer(self, doing: str) -> dict:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            stderr = (Path(self._folder.name) / "stderr").read_text(errors="replace")
            raise SparkReaderError(f"Spark's Iceberg reader exited while {doing}: {stderr[-3000:]}")
        answer = json.loads(line)
        if "error" in answer:
            raise SparkReaderError(f"Spark's Iceberg reader failed {doing}: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        try:
            self._process.wait(60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._folder.cleanup()


_SHARED: list[SparkIcebergReader] = []


def shared_reader() -> SparkIcebergReader:
    """One reader for the process, started on first use and closed when the process exits."""
    if not _SHARED:
        _SHARED.append(SparkIcebergReader())
        atexit.register(_SHARED[0].close)
    return _SHARED[0]


def java_catalog(name: str, properties: dict[str, str], scratch: Path) -> tuple[str, dict[str, str]]:
    """The Spark catalog (name, `spark.sql.catalog.<name>.*` properties, "" the catalog's class) that reaches the
    catalog pyiceberg's `load_catalog(name, **properties)` opens, with S3FileIO on the same S3 endpoint (path-style,
    as moto serves it). A SQL catalog keeps pyiceberg's name (JdbcCatalog, like pyiceberg's SqlCatalog, keys its
    rows by the catalog's name) and is read from a copy of its SQLite file made now, at `scratch`: JdbcCatalog keeps
    its connections open, and a lock they hold made the engine's next commit fail with "database is locked"."""
    kind = properties.get("type", "rest")
    endpoint = properties.get("s3.endpoint") or os.environ.get("AWS_ENDPOINT_URL")
    region = properties.get("s3.region") or os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
    java = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.path-style-access": "true",
        "client.region": region,
        "cache-enabled": "false",
    }
    if endpoint:
        java["s3.endpoint"] = endpoint
    if properties.get("warehouse"):
        java["warehouse"] = properties["warehouse"]
    if kind == "sql":
        assert properties["uri"].startswith("sqlite:///"), f"a SQL catalog not on SQLite: {properties['uri']}"
        with sqlite3.connect(properties["uri"].removeprefix("sqlite:///")) as live, sqlite3.connect(scratch) as copy:
            live.backup(copy)
        java.update({"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog", "uri": f"jdbc:sqlite:{scratch}"})
        return name, java
    if kind == "glue":
        java["catalog-impl"] = "org.apache.iceberg.aws.glue.GlueCatalog"
        if os.environ.get("AWS_ENDPOINT_URL"):
            java["glue.endpoint"] = os.environ["AWS_ENDPOINT_URL"]
        return "reader", java
    assert kind == "rest", f"catalog type {kind!r}: Spark's reader knows sql, glue and rest"
    java["type"] = "rest"
    java.update({k: v for k, v in properties.items() if k == "uri" or k.startswith("rest.")})
    return "reader", java
