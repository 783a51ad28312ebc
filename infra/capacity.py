"""Whether the EMR application's maximum capacity holds the runs that may be under way at once, checked at synth.

A run's footprint is read from the spark-submit parameters the trigger's StartJobRun passes (SinkJob's
`spark_parameters`), with EMR Serverless' defaults for what they leave out (EMR Serverless User Guide, "Spark job
properties", jobs-spark.html#spark-defaults): driver and executors of 4 cores and 14G each, 20G of disk each, dynamic
allocation on with no executor limit (emr-6.10.0 and later). A worker's memory is the Spark memory plus its
overhead (10%, at least 384 MB), rounded up to whole GB: 14G runs on a 16 GB worker. A run is its driver and at
most `spark.dynamicAllocation.maxExecutors` executors (`spark.executor.instances` without dynamic allocation).

Concurrent runs: each connector has at most one run (its lease), so by default max_capacity must hold one run per
connector; `emr.concurrent_runs` says fewer when queueing the rest is accepted (an Iceberg connector's scheduled
upkeep is a run too, not counted: it waits for capacity when none is left). A capacity that cannot hold them
refuses synthesis (SettingsError naming `emr.max_capacity.<resource>`): past the limit, runs wait for capacity
in the application, unseen, while their trigger claims age.
"""
from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass

from infra.errors import SettingsError
from infra.settings import Settings

DEFAULTS = {  # EMR Serverless' Spark defaults (see the module docstring)
    "spark.driver.cores": "4", "spark.driver.memory": "14g", "spark.executor.cores": "4",
    "spark.executor.memory": "14g", "spark.executor.instances": "3", "spark.dynamicAllocation.enabled": "true",
    "spark.dynamicAllocation.maxExecutors": "infinity", "spark.emr-serverless.driver.disk": "20g",
    "spark.emr-serverless.executor.disk": "20g",
}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)b?", re.IGNORECASE)
_GB = {"k": 1 / 1024 ** 2, "m": 1 / 1024, "g": 1, "t": 1024, "": 1 / 1024}  # Spark: no unit is MiB


@dataclass(frozen=True)
class Footprint:
    cpu: int  # vCPU
    memory: int  # GB
    disk: int  # GB

    def times(self, n: int) -> "Footprint":
        return Footprint(self.cpu * n, self.memory * n, self.disk * n)


def spark_conf(parameters: str) -> dict[str, str]:
    """The `--conf key=value` pairs of spark-submit parameters, over DEFAULTS."""
    words = shlex.split(parameters)
    given = dict(words[i + 1].split("=", 1) for i, word in enumerate(words[:-1]) if word == "--conf")
    return {**DEFAULTS, **given}


def run_footprint(parameters: str) -> Footprint:
    """What one run started with these spark-submit parameters may hold at most; ValueError when unbounded."""
    conf = spark_conf(parameters)
    if conf["spark.dynamicAllocation.enabled"].lower() == "true":
        executors = conf["spark.dynamicAllocation.maxExecutors"]
        if not executors.isdigit():
            raise ValueError("spark.dynamicAllocation.maxExecutors is unbounded: a run may take the whole application")
    else:
        executors = conf["spark.executor.instances"]
    driver = _worker(conf, "driver")
    executor = _worker(conf, "executor")
    n = int(executors)
    return Footprint(driver.cpu + n * executor.cpu, driver.memory + n * executor.memory,
                     driver.disk + n * executor.disk)


def check_capacity(settings: Settings, parameters: str, connectors: int) -> Footprint:
    """SettingsError naming `emr.max_capacity.<cpu|memory|disk>` when it cannot hold the concurrent runs (see the
    module docstring); returns what they need."""
    runs = settings.emr.concurrent_runs or connectors
    why = "emr.concurrent_runs" if settings.emr.concurrent_runs else "one per connector"
    try:
        need = run_footprint(parameters).times(runs)
    except ValueError as e:
        raise SettingsError(settings.source, "emr.max_executors_per_run", str(e)) from None
    emr = settings.emr
    for resource, have, wanted, unit in (("cpu", emr.max_cpu, need.cpu, "vCPU"),
                                         ("memory", emr.max_memory, need.memory, "GB"),
                                         ("disk", emr.max_disk, need.disk, "GB")):
        number = re.match(r"\d+", have)
        assert number is not None  # settings.py's _CAPACITY patterns start with digits
        if int(number[0]) < wanted:
            raise SettingsError(settings.source, f"emr.max_capacity.{resource}", (
                f"{have} cannot hold {runs} concurrent run(s) ({why}) of {wanted // runs} {unit} each ({wanted} "
                f"{unit}: a driver and up to emr.max_executors_per_run={emr.max_executors_per_run} executors per "
                f"run): raise it, lower emr.max_executors_per_run, or set emr.concurrent_runs to how many "
                f"runs may run at once (the others queue)"))
    return need


def _worker(conf: dict[str, str], role: str) -> Footprint:
    memory = _gb(conf[f"spark.{role}.memory"])
    overhead = conf.get(f"spark.{role}.memoryOverhead")
    memory += _gb(overhead) if overhead else max(0.375, 0.1 * memory)
    disk = _gb(conf[f"spark.emr-serverless.{role}.disk"])
    return Footprint(int(conf[f"spark.{role}.cores"]), math.ceil(memory - 1e-9), math.ceil(disk))


def _gb(size: str) -> float:
    match = _SIZE.fullmatch(size.strip())
    if not match:
        raise ValueError(f"{size!r} is not a Spark size")
    return float(match[1]) * _GB[match[2].lower()]
