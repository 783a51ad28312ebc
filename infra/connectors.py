"""Connector specs: the Confluent JSON files of an environment, validated by the engine and against the settings.

A spec carries what the deployment needs of a connector: its name, the topics it reads (resolved against the
environment's MSK topics), its S3 prefix, its consumer group, the S3 key its config is published under, and its
dead-letter queue (a topic or an S3 prefix, when set), with IcebergFormat the Glue tables it writes, and the topics
`sink-engine restore` may produce its objects' records into (the environment's `restore` settings). Its
`document` is the file as published: a Confluent Cloud file whose schema'd input names no Schema Registry gets
the environment's `schema_registry` written into it (`published_document`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from infra.errors import ConnectorSpecError, SettingsError
from infra.iceberg import WAREHOUSE_PREFIX, IcebergTables, check_deployable, iceberg_tables, table_bucket_arn
from infra.settings import SchemaRegistrySettings, Settings
from lambdas.trigger.restore import target_allowed
from sink_engine.config import SinkConfig, WorkerSettings, parse_config
from sink_engine.config.cloud import is_cloud
from sink_engine.config.cloud_registry import RegistryDefault, registry_keys
from sink_engine.config.credentials import clear_text_credential
from sink_engine.config.document import read_document
from sink_engine.config.key_policy import IgnoredKey
from sink_engine.config.lint import ConfigWarning
from sink_engine.continuous import settings as continuous_run
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import ConfigError, ConfigErrors, OptionError
from sink_engine.format.settings import FormatSettings
from sink_engine.run.settings import RunSettings
from sink_engine.run.wall_clock import WallClockCuts
from sink_engine.secrets import config_map
from sink_engine.source.msk_brokers import needs_cluster_brokers
from sink_engine.source.settings import SourceSettings
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import S3Access
from sink_engine.target.choice import target_for
from sink_engine.target.iceberg_tables.settings import IcebergSettings
from sink_engine.transform.settings import TransformSettings
from sink_engine.validation import check_config

CONFIG_PREFIX = "_connectors/"
# CancelJobRun's shutdownGracePeriodInSeconds, 15 to 1800 s ("EMR Serverless job run cancellation with grace period",
# https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/job-cancellation-grace-period.html)
GRACE_RANGE_S = (15, 1800)
# what a stopping continuous job needs past its lease duration: it waits for its tasks at most half of
# `sink.lease.duration.ms`, cancels its Spark job (30 s at most), then releases the lease (continuous/driver.py)
GRACE_MARGIN_S = 30


@dataclass(frozen=True)
class ContinuousSpec:
    """How a continuous connector's job runs (the environment's `continuous.connectors.<name>`, and its config):
    the STREAMING run's retry policy, the grace period the trigger cancels it with (the lease duration and
    GRACE_MARGIN_S: the job commits what it closed and releases its lease before EMR stops it), the freshness alarm's
    threshold."""

    freshness_alarm_seconds: int
    max_failed_attempts_per_hour: int
    shutdown_grace_seconds: int


@dataclass(frozen=True)
class ConnectorSpec:
    name: str
    source: str
    topics: tuple[str, ...]
    topics_dir: str
    format: str
    document: dict[str, Any]
    dlq_topic: str | None = None  # errors.deadletterqueue.topic.name
    dlq_s3_prefix: str | None = None  # errors.deadletterqueue.s3.prefix, without slashes at either end
    iceberg: IcebergTables | None = None  # IcebergFormat: its Glue database or S3 Tables namespace, and tables
    ignored: tuple[IgnoredKey, ...] = ()  # keys no one knows, which the job ignores (a synth warning each)
    written: tuple[str, ...] = ()  # the topics its objects are written under: `topics` as its RegexRouters name them
    # restore.connectors.<name>.target_topics: names, or prefixes ending in `*` (empty: restore not deployed)
    restore_targets: tuple[str, ...] = ()
    continuous: ContinuousSpec | None = None  # continuous.connectors.<name> (None: bounded runs)
    # the worker settings of its job: the environment's MSK cluster (msk.cluster_arn), whose brokers the job asks
    # for when the file names none (sink_engine/source/msk_brokers.py)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    warnings: tuple[ConfigWarning, ...] = ()  # keys taken as written while most likely a mistake (a synth warning)

    @property
    def group_id(self) -> str:
        """The Kafka consumer group the job uses (Kafka Connect's `connect-<name>` convention)."""
        return f"connect-{self.name}"

    @property
    def config_key(self) -> str:
        return f"{CONFIG_PREFIX}{self.name}.json"

    @property
    def config_sha256(self) -> str:
        """The hash of the config as published (its JSON with sorted keys): what a continuous job runs with; the
        trigger restarts the job when it changes."""
        return hashlib.sha256(json.dumps(self.document, sort_keys=True).encode()).hexdigest()

    @cached_property
    def config(self) -> SinkConfig:
        """The connector's parsed config (validated when the spec was loaded), parsed once: synthesis reads it for
        each of the connector's resources."""
        return parse_config(self.document, worker=self.worker)

    @property
    def brokers_from_cluster(self) -> bool:
        """Whether its job asks MSK for the cluster's brokers (kafka:GetBootstrapBrokers): its file names none."""
        return needs_cluster_brokers(self.config)

    def data_prefixes(self) -> tuple[str, ...]:
        """The key prefixes the job writes objects under: `<topics.dir>/<topic>/` for each topic its records are
        written under (`written`: routed by RegexRouters, else the source topics; none with IcebergFormat, whose
        files lie under its tables' locations: `iceberg`)."""
        if self.iceberg:
            return ()
        return tuple(f"{self.topics_dir}/{topic}/" for topic in self.written or self.topics)


# The settings that decide when a file closes, which the trigger reads to start only runs that close one.
ROTATION_KEYS = ("flush.size", "rotate.schedule.interval.ms", "rotate.interval.ms", "timestamp.extractor", "timezone")
# The settings that size a run's workers (lambdas/trigger/sizing.py): its tasks, its CPU per record, its reach.
SIZING_KEYS = ("tasks.max", "format.class", "sink.run.max.records.per.partition")


INDEX_KEY = f"{CONFIG_PREFIX}_index.json"


def index_uri(bucket_name: str) -> str:
    """CONNECTORS_URI of the trigger and replay Lambdas: where the admin publishes the connector index."""
    return f"s3://{bucket_name}/{INDEX_KEY}"


def connector_index(
    connectors: tuple[ConnectorSpec, ...], bucket_name: str, role_arns: dict[str, str]
) -> list[dict[str, Any]]:
    """The connector index the admin publishes at INDEX_KEY, which the trigger and the replay read: one entry per
    connector, {name, topics, config_uri, rotation, sizing, role_arn, tables, restore_targets, continuous?},
    `rotation` and
    `sizing` holding the connector's ROTATION_KEYS and SIZING_KEYS as the engine parses them, `role_arn` its job
    runtime role (`role_arns`: name -> ARN, tokens allowed), `tables` whether it writes Iceberg tables (which
    `iceberg maintain` keeps up) and `restore_targets` the topics a restore of its objects may produce into (names,
    or prefixes ending in `*`; empty: none); `continuous`, only for a continuous connector,
    {max_failed_attempts_per_hour, shutdown_grace_seconds, config_sha256} (the trigger keeps a STREAMING job run of it
    going, restarted when the hash of its published config changes)."""
    described = []
    for c in connectors:
        config = c.config
        described.append(
            {
                "name": c.name,
                "topics": list(c.topics),
                "config_uri": f"s3://{bucket_name}/{c.config_key}",
                "rotation": config.values_of(ROTATION_KEYS),
                "sizing": config.values_of(SIZING_KEYS),
                "role_arn": role_arns[c.name],
                "tables": target_for(config).capabilities.tables,
                "restore_targets": list(c.restore_targets),
                **(
                    {
                        "continuous": {
                            "max_failed_attempts_per_hour": c.continuous.max_failed_attempts_per_hour,
                            "shutdown_grace_seconds": c.continuous.shutdown_grace_seconds,
                            "config_sha256": c.config_sha256,
                        }
                    }
                    if c.continuous
                    else {}
                ),
            }
        )
    return described


def load_connectors(settings: Settings) -> tuple[ConnectorSpec, ...]:
    """Every `*.json` in the environment's connectors folder, validated; at least one is required."""
    files = sorted(settings.connectors_dir.glob("*.json"))
    if not files:
        raise ConnectorSpecError(str(settings.connectors_dir), "(folder)", "holds no connector JSON file")
    specs = tuple(_load(path, settings) for path in files)
    names = [s.name for s in specs]
    for name in names:
        if names.count(name) > 1:
            raise ConnectorSpecError(settings.connectors_dir.name, "name", f"{name!r} is used by two files")
    for section, entries in (
        ("restore", settings.restore.target_topics),
        ("continuous", settings.continuous.connectors),
    ):
        for name in entries:
            if name not in names:
                raise SettingsError(
                    settings.source,
                    f"{section}.connectors.{name}",
                    f"names no connector of {settings.connectors_dir.name}/ ({', '.join(names)})",
                )
    return specs


def _load(path: Path, settings: Settings) -> ConnectorSpec:
    source = f"{settings.env}/{path.name}"
    worker = WorkerSettings(cluster_arn=settings.msk.cluster_arn)  # the brokers a file names not: the cluster's
    try:
        document, warnings = read_document(path.read_bytes(), source)
        _check_no_clear_credentials(source, document)
        document = published_document(document, settings.schema_registry)
        # unknown keys, refused values, malformed ${secrets:...} references, settings a run would refuse
        config = check_config(parse_config(document, worker=worker, warnings=warnings))
    except OptionError as e:
        raise ConnectorSpecError(source, "(file)", e.reason) from e
    except ConfigError as e:
        raise ConnectorSpecError(source, e.key, _reasons(e)) from e
    if config.ignored and settings.connectors.refuse_ignored_keys:
        first = config.ignored[0]
        raise ConnectorSpecError(
            source,
            first.key,
            f"is ignored ({first.describe()}); this environment refuses "
            "ignored keys (connectors.refuse_ignored_keys in its settings): remove or fix it",
        )
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", config.name):
        raise ConnectorSpecError(source, "name", "use 1-64 letters, digits, '-' or '_' (it names AWS resources)")
    if config.name.startswith("_"):
        raise ConnectorSpecError(
            source,
            "name",
            f"{config.name!r}: names starting with '_' are reserved for the "
            f"admin's own objects under {CONFIG_PREFIX} (the connector index, the desired state)",
        )
    run, fmt = RunSettings.from_config(config), FormatSettings.from_config(config).format_class
    _expect(source, "s3.bucket.name", run.bucket, settings.bucket_name)
    _expect(source, "s3.region", run.region, settings.region)
    _expect(source, "offset.storage.dynamodb.table", run.offsets_table, settings.table_name)
    if S3Access.from_config(config).endpoint_url is not None:
        raise ConnectorSpecError(source, "store.url", "must be unset on AWS (the regional endpoint is used)")
    route = _check_deployable(source, config)
    topics = _resolve_topics(source, config, settings)
    if fmt == "iceberg":
        bucket = settings.iceberg.table_bucket
        check_deployable(
            source,
            config,
            topics,
            account=settings.account,
            region=settings.region,
            reserved_database=settings.catalog.database,
            stack_table_bucket_arn=table_bucket_arn(settings.region, settings.account, bucket) if bucket else None,
        )
    topics_dir = ObjectNaming.from_config(config).topics_dir.strip("/")
    if (
        topics_dir == settings.retention.dlq_prefix.strip("/")
        or topics_dir + "/" == CONFIG_PREFIX
        or (topics_dir + "/").startswith(WAREHOUSE_PREFIX + "/")
    ):
        raise ConnectorSpecError(source, "topics.dir", f"{topics_dir!r} is reserved")
    dead_letters = DeadLetterSettings.from_config(config)
    dlq_s3_prefix = (dead_letters.s3_prefix or "").strip("/") or None
    own_dlq = f"{settings.retention.dlq_prefix}{config.name}"
    if dlq_s3_prefix is not None and dlq_s3_prefix != own_dlq:
        raise ConnectorSpecError(
            source,
            "errors.deadletterqueue.s3.prefix",
            f"must be {own_dlq!r}: the connector's own folder under retention.dlq_prefix, "
            "which the job may write, the replay may read and the DLQ expiry covers",
        )
    dlq_topic = dead_letters.topic or None
    restore_targets = _restore_targets(settings, config.name, dlq_topic)
    if restore_targets and fmt == "iceberg":
        raise SettingsError(
            settings.source,
            f"restore.connectors.{config.name}",
            "names an IcebergFormat connector: restore reads the S3 objects of the other formats, not Iceberg tables",
        )
    return ConnectorSpec(
        config.name,
        source,
        topics,
        topics_dir,
        fmt,
        document,
        dlq_topic=dlq_topic,
        dlq_s3_prefix=dlq_s3_prefix,
        iceberg=iceberg_tables(config, topics),
        ignored=config.ignored,
        written=tuple(dict.fromkeys(route(topic) for topic in topics)),
        restore_targets=restore_targets,
        continuous=_continuous(settings, source, config),
        worker=worker,
        warnings=config.warnings,
    )


def _reasons(error: ConfigError) -> str:
    """The first error's reason, and the other keys refused in the same pass."""
    if not isinstance(error, ConfigErrors):
        return error.reason
    others = ", ".join(f"'{e.key}'" for e in error.errors[1:])
    return f"{error.reason} (and keys {others}: `sink-engine validate` lists them all)"


def _continuous(settings: Settings, source: str, config: SinkConfig) -> ContinuousSpec | None:
    """The connector's continuous runs (`continuous.connectors.<name>`), refused naming the setting or its file's key
    when its job could not run continuously or its freshness could not be watched."""
    wanted = settings.continuous.of(config.name)
    if wanted is None:
        return None
    where = f"continuous.connectors.{config.name}"
    refused = _continuous_refusal(config)
    if refused is not None:
        raise ConnectorSpecError(source, refused.key, f"cannot run continuously ({where}): {refused}")
    wait_key, wait_ms = _stream_wait(config)
    if wait_ms <= 0:
        raise ConnectorSpecError(
            source,
            wait_key,
            f"must be set for a continuous connector ({where}): without a scheduled rotation a partition's open file "
            "waits for flush.size, and its records' age in Kafka has no bound",
        )
    if wanted.freshness_alarm_seconds * 1000 <= wait_ms:
        raise SettingsError(
            settings.source,
            f"{where}.freshness_alarm_seconds",
            f"{wanted.freshness_alarm_seconds} s is not above the {wait_ms} ms a record may wait for its commit "
            f"({wait_key}), so the alarm would always fire",
        )
    lease_ms = RunSettings.from_config(config).lease_ms
    grace = max(GRACE_RANGE_S[0], math.ceil(lease_ms / 1000) + GRACE_MARGIN_S)
    if grace > GRACE_RANGE_S[1]:
        raise ConnectorSpecError(
            source,
            "sink.lease.duration.ms",
            f"{lease_ms} ms is too long for a continuous connector: the trigger stops its job with a grace period of "
            f"the lease duration and {GRACE_MARGIN_S} s, and CancelJobRun allows at most {GRACE_RANGE_S[1]} s",
        )
    return ContinuousSpec(wanted.freshness_alarm_seconds, wanted.max_failed_attempts_per_hour, grace)


def _continuous_refusal(config: SinkConfig) -> ConfigError | None:
    """Why a continuous run cannot write the connector, as `sink-engine run --continuous` refuses it: its target's
    capabilities say so, or the run's own settings (a Wallclock setting it cannot follow) are refused."""
    continuous = target_for(config).capabilities.continuous
    if not continuous.supported:
        return ConfigError(continuous.key, continuous.reason)
    try:
        continuous_run.ContinuousSettings.from_config(config)
    except ConfigError as e:
        return e
    return None


def _stream_wait(config: SinkConfig) -> tuple[str, int]:
    """How long a record may wait in a continuous run before it is committed, and the key that sets it: the
    `rotate.schedule.interval.ms` a file closes on; with IcebergFormat the `iceberg.control.commit.interval-ms`
    window its partition is cut at, and the driver's commit delay after the window's boundary
    (target/iceberg_tables/stream_commit.py)."""
    if FormatSettings.from_config(config).format_class != "iceberg":
        return "rotate.schedule.interval.ms", WallClockCuts.from_config(config).schedule_ms
    from sink_engine.target.iceberg_tables.stream_commit import commit_delay_ms  # imports pyarrow

    interval = IcebergSettings.from_config(config).commit_interval_ms
    return "iceberg.control.commit.interval-ms", interval + commit_delay_ms(interval)


def _restore_targets(settings: Settings, name: str, dlq_topic: str | None) -> tuple[str, ...]:
    """The connector's restore targets, none of which may take in a topic a connector of the environment reads
    (`msk.topics`: its sink would store the restored records again, under new offsets) or its dead-letter topic."""
    targets = settings.restore.targets_of(name)
    for topic in (*settings.msk.topics, *([dlq_topic] if dlq_topic else [])):
        if target_allowed(targets, topic):
            whose = "is its dead-letter topic" if topic == dlq_topic else "a connector reads (msk.topics)"
            raise SettingsError(
                settings.source,
                f"restore.connectors.{name}.target_topics",
                f"takes in {topic!r}, which {whose}: restore into a topic of its own (e.g. '<topic>.restored')",
            )
    return targets


def ignored_key_warnings(connectors: tuple[ConnectorSpec, ...]) -> list[str]:
    """One warning per key a connector file carries that the job ignores, and per key it takes as written while
    most likely a mistake (config/lint.py, a key set twice), naming the file and the key."""
    return [
        f"connector config {c.source}, key '{i.key}': ignored ({i.describe()}); set "
        "connectors.refuse_ignored_keys in the environment's settings to refuse such keys"
        for c in connectors
        for i in c.ignored
    ] + [f"connector config {c.source}, key '{w.key}': {w.message}" for c in connectors for w in c.warnings]


def published_document(document: Any, registry: SchemaRegistrySettings | None) -> Any:
    """`document` with the Schema Registry keys a Confluent Cloud file takes from the environment's `registry`
    (config/cloud_registry.py: the value or key converter's URL and USER_INFO credentials, when its input is
    AVRO, PROTOBUF or JSON_SR and the file names no registry URL); any other document as it is.

    Written into the published file rather than passed to each job run (an environment variable in StartJobRun's
    sparkSubmitParameters, `spark.emr-serverless.driverEnv.*`): the published file is what every reader of the
    connector's config reads (each run the trigger starts, the DLQ replay Lambda, `validate --config s3://...`),
    so none of them needs the setting passed again; and a `${secrets:...}` in
    `user_info` is then a reference of the connector's own file, which job_policy.reference_reads grants the job
    role (ReadOwnSecrets) like any other."""
    if registry is None or not isinstance(document, dict):
        return document
    config = config_map(document)
    if not is_cloud(config):
        return document
    added = {
        key: value
        for key, (value, _) in registry_keys(config, RegistryDefault(registry.url, registry.user_info)).items()
    }
    if not added:
        return document
    return {**document, "config": {**config, **added}} if config is not document else {**document, **added}


def _check_no_clear_credentials(source: str, document: dict) -> None:
    """A deployed connector file is published to S3 and carried in the CloudFormation template, so a credential
    in it must be a `${secrets:...}` or `${ssm:...}` reference (resolved by the job at run time,
    sink_engine/secrets.py)."""
    if not isinstance(document, dict):
        return
    for key, value in config_map(document).items():
        if clear_text_credential(key, value):
            raise ConnectorSpecError(
                source,
                key,
                "holds a credential in clear text; a deployed connector file is "
                "published to S3 and carried in the CloudFormation template, so it must not. "
                "Reference it as ${secrets:<secret name>:<json key>} (AWS Secrets Manager) or "
                "${ssm:<parameter name>} (a SecureString in SSM Parameter Store; the job's "
                "role may read exactly what its file references) or use MSK IAM auth",
            )


def _check_deployable(source: str, config: SinkConfig) -> Callable[[str], str]:
    """What the deployed bucket forbids: ACLs other than bucket-owner-full-control (the bucket enforces
    bucket-owner ownership, so S3 refuses any other ACL). What the stacks cannot declare: a router whose names depend
    on the records (TimestampRouter, a router behind a predicate) in an S3-object connector, since the job's write
    grants and the Athena tables are per written topic's prefix. Returns the topic each source topic is written
    under (its RegexRouters applied)."""
    transforms = TransformSettings.from_config(config)
    route = transforms.topic_router()
    tables = FormatSettings.from_config(config).format_class == "iceberg"
    if route is None and not tables:  # (validation refuses these routers for Iceberg)
        spec = next(s for s in transforms.routers if s.predicate is not None or not s.type.endswith(".RegexRouter"))
        raise ConnectorSpecError(
            source,
            f"transforms.{spec.alias}.type",
            "this router names its topics by record (a TimestampRouter, or a router behind a "
            "predicate), so the stack cannot grant the job its prefixes nor declare their "
            "tables before the records exist; a RegexRouter without a predicate is deployable",
        )
    acl = ObjectOptions.from_config(config).acl
    if acl and acl != "bucket-owner-full-control":
        raise ConnectorSpecError(
            source,
            "s3.acl.canned",
            f"{acl!r} cannot be set: the data-lake bucket disables ACLs (object ownership "
            "BucketOwnerEnforced) and S3 refuses a PUT with any ACL but "
            "'bucket-owner-full-control'; remove the key and grant access with policies",
        )
    assert route is not None  # (validation refuses these routers for Iceberg too)
    return route


def _expect(source: str, key: str, actual: Any, expected: Any) -> None:
    if actual != expected:
        raise ConnectorSpecError(source, key, f"is {actual!r}; this environment deploys {expected!r}")


def _resolve_topics(source: str, config, settings: Settings) -> tuple[str, ...]:
    """Explicit topics must be among `msk.topics`; a regex must match at least one of them."""
    named = SourceSettings.from_config(config).topics
    if named is not None:
        missing = [t for t in named if t not in settings.msk.topics]
        if missing:
            raise ConnectorSpecError(source, "topics", f"{', '.join(missing)} not in the environment's msk.topics")
        return named
    matched = tuple(t for t in settings.msk.topics if config.topic_matches(t))
    if not matched:
        raise ConnectorSpecError(source, "topics.regex", "matches none of the environment's msk.topics")
    return matched
