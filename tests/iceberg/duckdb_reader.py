"""A second Iceberg reader for the tests: DuckDB's iceberg extension, reading a table's current snapshot from its
metadata file on moto's S3.

The extension's wheels (`duckdb-extension-iceberg`, `-avro`, `-httpfs` on PyPI) exist for duckdb 1.5.5, not for the
duckdb 2.0.0 the project runs, so `make venv` installs duckdb 1.5.5 and the three extensions into a folder of their
own (`.venv/duckdb-iceberg`, requirements-duckdb-iceberg.txt), and the table is read in a subprocess that imports
from that folder only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

FOLDER = Path(sys.prefix) / "duckdb-iceberg"

_SCRIPT = r"""
import glob, json, os, sys
import duckdb, duckdb_extension_avro, duckdb_extension_httpfs, duckdb_extension_iceberg
metadata, columns, endpoint, region, verb = sys.argv[1:6]
con = duckdb.connect()
for module in (duckdb_extension_httpfs, duckdb_extension_avro, duckdb_extension_iceberg):
    path = glob.glob(os.path.dirname(module.__file__) + "/**/*.duckdb_extension", recursive=True)[0]
    con.execute(f"LOAD '{path}'")
con.execute(
    f"CREATE SECRET moto (TYPE S3, KEY_ID '{os.environ['AWS_ACCESS_KEY_ID']}', "
    f"SECRET '{os.environ['AWS_SECRET_ACCESS_KEY']}', REGION '{region}', ENDPOINT '{endpoint}', "
    "URL_STYLE 'path', USE_SSL false)"
)
query = f"{verb} {columns} FROM iceberg_scan('{metadata}')"
names = [d[0] for d in con.execute(query).description]
for row in con.fetchall():
    print(json.dumps(dict(zip(names, row)), default=str))
"""


def duckdb_rows(metadata_location: str, columns: tuple[str, ...], verb: str = "SELECT") -> list[dict]:
    """The rows of the table whose current metadata file is `metadata_location` (s3://...), as DuckDB's iceberg
    extension reads them, `columns` only (SQL expressions); with `verb` "DESCRIBE SELECT", DuckDB's description of
    those columns instead (a row per column: column_name, column_type, ...)."""
    assert (FOLDER / "duckdb_extension_iceberg").is_dir(), f"{FOLDER} is missing: run `make venv`"
    endpoint = urlparse(os.environ["AWS_ENDPOINT_URL"]).netloc
    region = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, metadata_location, ", ".join(columns), endpoint, region, verb],
        env={**os.environ, "PYTHONPATH": str(FOLDER), "PYTHONNOUSERSITE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
