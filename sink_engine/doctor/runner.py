"""`sink-engine doctor`: load the config as a run does, then run every check that applies to it, print one row per
check and a verdict, and log a DOCTOR_CHECK event per check. Exit 0 when none failed, 1 otherwise (the failures
are named in the last line).

The config is first loaded with its `${secrets:...}` / `${ssm:...}` references as written (the `config` check: a
config error names its key), then with them resolved (the `secrets` check, when it has references); when they do
not resolve, the later checks still run, with the values as written.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TextIO

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.config import SinkConfig, WorkerSettings
from sink_engine.config.cloud_registry import RegistryDefault
from sink_engine.doctor import environment, grants, kafka, offsets, s3, schema_registry, spark
from sink_engine.doctor.checks import FAILED, OK, Check, Result
from sink_engine.doctor.settings import DoctorSettings
from sink_engine.errors import SinkError
from sink_engine.secrets import Reference, references
from sink_engine.source.msk_brokers import kafka_client, with_cluster_brokers
from sink_engine.target.choice import target_for
from sink_engine.target.contract import Target
from sink_engine.validation import load_checked_config


def checks_of(target: Target) -> tuple[Check, ...]:
    """Every check, the target's own (what it writes to) after the schema registry's."""
    return (
        *environment.CHECKS,
        *spark.CHECKS,
        *kafka.CHECKS,
        *schema_registry.CHECKS,
        *target.doctor_checks(),
        *s3.CHECKS,
        *offsets.CHECKS,
    )


@dataclass
class Context:
    """What the checks share: the config, its target, the topics the Kafka check found (None until it found them),
    and the settings the checks read of the config (built once, when a check first reads them)."""

    config: SinkConfig
    target: Target
    topics: tuple[str, ...] | None = None

    @cached_property
    def settings(self) -> DoctorSettings:
        return DoctorSettings.from_config(self.config)


def doctor(
    location: str,
    registry_default: RegistryDefault | None = None,
    out: TextIO | None = None,
    worker: WorkerSettings | None = None,
) -> int:
    """Check everything a run of the connector at `location` (a path or s3:// URI) needs, with the Kafka Connect
    worker's settings `worker` (config/worker.py), printing to `out` (None: standard output); see the module
    docstring."""
    results, config = _load(location, registry_default, worker)
    if config is not None:
        context = Context(config, target_for(config))
        results += [check(context) for check in checks_of(context.target) if check.applies(config)]
    name = config.name if config is not None else None
    for result in results:
        events.emit(
            events.DOCTOR_CHECK,
            logging.WARNING if result.failed else logging.INFO,
            connector=name,
            check=result.name,
            status=result.status,
            message=result.message,
        )
    _print(results, out or sys.stdout)
    return 1 if any(r.failed for r in results) else 0


def _load(
    location: str, registry_default: RegistryDefault | None, worker: WorkerSettings | None
) -> tuple[list[Result], SinkConfig | None]:
    try:
        written = with_cluster_brokers(
            load_checked_config(location, resolve_secrets=False, registry=registry_default, worker=worker),
            kafka_client,
        )
    except ClientError as e:  # reading an s3:// config
        bucket, _, key = location.removeprefix("s3://").partition("/")
        return [Result("config", FAILED, grants.describe(e, "s3", f"arn:aws:s3:::{bucket}/{key}"))], None
    except (SinkError, BotoCoreError) as e:
        return [Result("config", FAILED, str(e))], None
    results = [Result("config", OK, f"{location}: connector {written.name}, {len(written.explicit)} keys set")]
    refs = _references(written)
    if not refs:
        return results, written
    try:
        read = load_checked_config(location, registry=registry_default, worker=worker)
        resolved = replace(read, values={**read.values, "bootstrap.servers": written["bootstrap.servers"]})
    except (SinkError, ClientError, BotoCoreError) as e:
        hints = "; ".join(grants.grant_hint(a) for a in sorted({r.source.iam_action for r in refs}))
        denied = f" ({hints})" if "AccessDenied" in str(e) else ""
        return results + [
            Result("secrets", FAILED, f"{e}{denied}; the checks below use the values as written")
        ], written
    shown = ", ".join(f"{ref} ({ref.config_key})" for ref in refs)
    return results + [Result("secrets", OK, f"resolved {len(refs)} reference(s): {shown}")], resolved


def _references(config: SinkConfig) -> list[Reference]:
    values = {**{k: v for k, v in config.values.items() if isinstance(v, str)}, **config.passthrough}
    return references(values)


def _print(results: list[Result], out: TextIO) -> None:
    width = max(len(r.name) for r in results)
    for result in results:
        print(f"{result.name:<{width}}  {result.status:<7}  {result.message}", file=out)
    failed = [r.name for r in results if r.failed]
    if failed:
        print(f"doctor: {len(failed)} of {len(results)} checks failed: {', '.join(failed)}", file=out)
    else:
        print(f"doctor: all {len(results)} checks passed", file=out)
