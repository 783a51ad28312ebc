"""The interpreter and the libraries a run imports, with their versions: what `pip` shipped to this machine (on
EMR Serverless, the job's archive) is what the table shows. A library a run of this config imports that is
missing fails; pyspark is reported when importable (EMR's image brings its own, `pip` may not know of it)."""

from __future__ import annotations

import importlib
import platform
import sys
from importlib import metadata
from typing import TYPE_CHECKING

from sink_engine.doctor.checks import Check, Failed

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context

# distribution name -> module a run imports
ALWAYS = {
    "pyarrow": "pyarrow",
    "confluent-kafka": "confluent_kafka",
    "boto3": "boto3",
    "botocore": "botocore",
    "fastavro": "fastavro",
    "orjson": "orjson",
}


def interpreter(_context: Context) -> str:
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}; "
        f"{sys.executable}"
    )


def libraries(context: Context) -> str:
    required = dict(ALWAYS, **context.target.capabilities.libraries)
    found, missing = [], []
    for distribution, module in required.items():
        version = _version(distribution, module)
        if version is None:
            missing.append(distribution)
        else:
            found.append(f"{distribution} {version}")
            if distribution == "confluent-kafka":
                found.append(f"librdkafka {importlib.import_module('confluent_kafka').libversion()[0]}")
    spark = _version("pyspark", "pyspark")
    found.append(f"pyspark {spark}" if spark else "pyspark not importable (run needs it; EMR's image brings it)")
    if missing:
        raise Failed(f"not importable: {', '.join(missing)} (found: {', '.join(found)})")
    return ", ".join(found)


def _version(distribution: str, module: str) -> str | None:
    """The installed version of `distribution`, or its module's `__version__`; None when it cannot be imported."""
    try:
        imported = importlib.import_module(module)
    except ImportError:
        return None
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return str(getattr(imported, "__version__", "unknown version"))


CHECKS = (Check("interpreter", interpreter), Check("libraries", libraries))
