"""Act as a principal: boto3 clients created in the body sign with its credentials and point at moto, in this
process and, with `spark`, in Spark's Python workers; with a `CallLog`, every call they make is recorded.

boto3's default session caches the credentials it first resolved, so the body gets a fresh one (and the previous
session is restored after); its EMR Serverless and Lambda requests sign their payload hash, which an IAM-enforcing
moto needs for a request without a body (`world.sign_payload_hash`; the trigger's tick lists its event source
mappings, a GET). Spark workers take the principal's variables from `SparkContext.environment`, which
PySpark sends with every task: a new set of variables starts new workers, which read them as the deployed job reads
its role. To record the workers' calls, each task installs the log first
(`sink_engine.run.spark_runner._task_function` is wrapped for the duration; the workers import this package from
the repository root, put on their PYTHONPATH); so does a continuous run's task (`sink_engine.continuous.driver
.stream_task`, wrapped the same way).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import boto3

from tests.iam.recorder import CallLog
from tests.iam.world import Principal, sign_payload_hash

ROOT = Path(__file__).resolve().parents[2]
_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


@contextmanager
def acting_as(principal: Principal, log: CallLog | None = None, spark=None):
    env = principal.credentials.env
    saved_env = {name: os.environ.get(name) for name in _VARIABLES}
    saved_session = boto3.DEFAULT_SESSION
    _set(os.environ, {name: env.get(name) for name in _VARIABLES})
    boto3.setup_default_session()
    for service in ("emr-serverless", "lambda"):
        boto3.DEFAULT_SESSION.events.register(f"before-sign.{service}", sign_payload_hash)
    if log:
        log.install(principal.name)
    try:
        if spark is None:
            yield
        else:
            with _workers_as(spark, principal, log):
                yield
    finally:
        if log:
            log.uninstall()
        _set(os.environ, saved_env)
        boto3.DEFAULT_SESSION = saved_session


@contextmanager
def _workers_as(spark, principal: Principal, log: CallLog | None):
    from sink_engine.continuous import driver as continuous_driver
    from sink_engine.run import spark_runner

    worker_env = {name: principal.credentials.env.get(name) for name in _VARIABLES}
    if log:
        worker_env["PYTHONPATH"] = str(ROOT)
    environment = spark.sparkContext.environment
    saved = {name: environment.get(name) for name in worker_env}
    factories = ((spark_runner, "_task_function"), (continuous_driver, "stream_task"))
    originals = [getattr(module, name) for module, name in factories]
    _set(environment, worker_env)
    if log:
        for (module, name), original in zip(factories, originals):
            setattr(module, name, _recording_tasks(original, log, principal.name))
    try:
        yield
    finally:
        for (module, name), original in zip(factories, originals):
            setattr(module, name, original)
        _set(environment, saved)


def _recording_tasks(original, log: CallLog, principal: str):
    """`original` (one of the engine's task function factories) whose tasks install `log` before their first call."""

    def task_function(*args):
        process = original(*args)

        def recorded(batches):
            log.install(principal)
            yield from process(batches)

        return recorded

    return task_function


def _set(target, values: dict) -> None:
    for name, value in values.items():
        if value is None:
            target.pop(name, None)
        else:
            target[name] = value
