"""Environment settings: `infra/environments/<env>.json`, read and validated into typed values.

Every setting is checked here, before any construct is built; a missing or malformed one raises SettingsError
naming its dotted path and file, which fails `cdk synth`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import fastavro
from fastavro.schema import SchemaParseException

from infra import zones
from infra.errors import SettingsError
from lambdas.trigger.batches import CONNECTORS_PER_RUN, MAX_CONNECTORS_PER_RUN
from sink_engine.config.credentials import clear_text_credential
from sink_engine.errors import ConfigError
from sink_engine.secrets import references

ENVIRONMENTS_DIR = Path(__file__).parent / "environments"

_ACCOUNT = r"\d{12}"
# each nested stack is a stack of the account (CloudFormation's stack quota) and a resource of the service stack
MAX_CONNECTOR_STACKS = 200
_REGION = r"[a-z]{2}(-gov)?-[a-z]+-\d"
_CLUSTER_ARN = r"arn:aws[a-z-]*:kafka:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):cluster/(?P<name>[A-Za-z0-9-]+)/(?P<uuid>[A-Za-z0-9-]+)"
_VPC = r"vpc-[0-9a-f]{8,17}"
_SUBNET = r"subnet-[0-9a-f]{8,17}"
_SECURITY_GROUP = r"sg-[0-9a-f]{8,17}"
_ROUTE_TABLE = r"rtb-[0-9a-f]{8,17}"
_VPC_ENDPOINT = r"vpce-[0-9a-f]{8,17}"
_KMS_KEY_ARN = r"arn:aws[a-z-]*:kms:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):key/[0-9a-f-]{36}"
_BUCKET = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_TABLE = r"[A-Za-z0-9_.-]{3,255}"
_TOPIC = r"[A-Za-z0-9._-]{1,249}"
_CAPACITY = {"cpu": r"\d+ ?vCPU", "memory": r"\d+ ?GB", "disk": r"\d+ ?GB"}
_RELEASE = r"emr-7\.\d+\.\d+"
# an EventBridge schedule expression: rate(1 hour), rate(6 hours), cron(0 3 * * ? *) (six fields, UTC)
_TABLE_BUCKET = r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]"  # an S3 table bucket's name
_SCHEDULE = r"rate\((1 (minute|hour|day)|([2-9]|[1-9]\d+) (minutes|hours|days))\)|cron\((\S+ ){5}\S+\)"
_CONNECTOR = r"[A-Za-z0-9_-]{1,64}"
# a restore target: a topic name, or a prefix of topic names ending in `*` (an MSK IAM topic ARN's wildcard)
_TARGET_TOPIC = r"[A-Za-z0-9._-]{1,249}\*?"
# one Schema Registry URL, http(s), without credentials in it (they go in schema_registry.user_info)
_REGISTRY_URL = r"https?://[A-Za-z0-9.-]+(:\d{1,5})?(/[^\s@,]*)?"

# The Python interpreters (/usr/bin/python<version>) on the image of each EMR release this stack may deploy: the
# "Python" row of the Amazon EMR Release Guide's "Application versions in Amazon EMR 7.x releases" (3.9 only on
# emr-7.0.0; 3.9 and 3.11 from emr-7.1.0 through emr-7.13.0). Add a release only after reading its row.
EMR_PYTHONS: dict[str, tuple[str, ...]] = {
    "emr-7.0.0": ("3.9",),
    **{f"emr-7.{minor}.0": ("3.9", "3.11") for minor in range(1, 14)},
}

# The oldest Python the engine runs on: pyproject.toml's requires-python (tests/infra/test_infra_settings.py checks
# they agree).
ENGINE_PYTHON = (3, 11)

# Where the job's interpreter (/usr/bin/python<emr.python>, which the job archive's bin/python links to) comes from,
# `emr.interpreter`: "image", an image the stack builds from the release's EMR Serverless image with that interpreter
# installed (infra/job/image/Dockerfile; Docker at `cdk deploy`), or "system", the release's own image as it is (no
# AWS document confirms the path on EMR Serverless images: for those who checked their release's image).
INTERPRETERS = ("image", "system")

# How the job (EMR Serverless) and the replay Lambda, in `network.subnet_ids`, reach STS, Glue, CloudWatch Logs, KMS,
# Secrets Manager and SSM: through a NAT the subnets already route to, or VPC endpoints the stack creates (see
# infra/constructs/network.py). S3 and DynamoDB go through gateway endpoints in both.
EGRESS = ("nat", "endpoints")
# The gateway endpoints the stack gives the route tables in either egress; `network.gateway_endpoint_ids` names
# existing ones to reuse instead (a route table takes a service's prefix-list route from one endpoint only).
GATEWAY_SERVICES = ("s3", "dynamodb")


@dataclass(frozen=True)
class MskSettings:
    cluster_arn: str
    topics: tuple[str, ...]

    @property
    def cluster_name(self) -> str:
        return self.cluster_arn.split("/")[1]

    @property
    def cluster_uuid(self) -> str:
        return self.cluster_arn.split("/")[2]

    def resource_arn(self, kind: str, name: str) -> str:
        """ARN of an MSK `topic` or `group` of this cluster, for kafka-cluster IAM actions."""
        prefix = self.cluster_arn.split(":cluster/")[0]
        return f"{prefix}:{kind}/{self.cluster_name}/{self.cluster_uuid}/{name}"


@dataclass(frozen=True)
class NetworkSettings:
    """Where the job and the replay Lambda run; `egress` is one of EGRESS, `route_table_ids` (the subnets' route
    tables, for the S3 and DynamoDB gateway endpoints the stack creates in either egress) is set while at least one
    gateway endpoint is to be created; `gateway_endpoint_ids`: service of GATEWAY_SERVICES -> the id of an existing
    gateway endpoint on those route tables, reused instead of created."""

    vpc_id: str
    subnet_ids: tuple[str, ...]
    security_group_ids: tuple[str, ...]
    egress: str
    route_table_ids: tuple[str, ...]
    gateway_endpoint_ids: dict[str, str] = field(default_factory=dict)
    # subnet -> its Availability Zone ID (`network.subnet_zone_ids`; required where EMR Serverless is in some
    # zones only, infra/zones.py)
    subnet_zone_ids: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EmrSettings:
    release_label: str
    architecture: str
    python: str
    max_cpu: str
    max_memory: str
    max_disk: str
    idle_timeout_minutes: int
    job_timeout_minutes: int
    # the executors a data run may have (the trigger's MAX_EXECUTORS_PER_RUN: lambdas/trigger/sizing.py)
    max_executors_per_run: int = 3
    # the application's MaxConcurrentRuns, which max_capacity must hold (None: every run that may be under way at
    # once); see infra/capacity.py
    concurrent_runs: int | None = None
    # `emr.interpreter`: one of INTERPRETERS
    interpreter_source: str = "image"
    # the account's "Max concurrent vCPUs per account" (EMR Serverless, default 16): the environment's worst case
    # must fit in it (infra/quotas.py)
    account_vcpu_quota: int = 16

    @property
    def interpreter(self) -> str:
        """The interpreter the job archive's bin/python links to, on the application's image."""
        return f"/usr/bin/python{self.python}"


@dataclass(frozen=True)
class TriggerSettings:
    """The trigger starts a run only when a file would close (the connector's own rotation settings decide);
    after n failed runs in a row it waits min(backoff_base_seconds * 2^(n-1), backoff_cap_seconds)."""

    backoff_base_seconds: int
    backoff_cap_seconds: int
    idle_flush_minutes: int
    batch_size: int
    max_batching_window_seconds: int
    run_claim_minutes: int
    # `trigger.connectors_per_run`: the connectors of one job role one triggered job run serves at most
    # (lambdas/trigger/batches.py)
    connectors_per_run: int = CONNECTORS_PER_RUN


@dataclass(frozen=True)
class RetentionSettings:
    glacier_after_days: int
    deep_archive_after_days: int
    dlq_prefix: str
    dlq_expire_after_days: int
    access_logs_expire_after_days: int
    log_retention_days: int


@dataclass(frozen=True)
class AlarmSettings:
    pending_records: int
    pending_age_seconds: int
    email: str | None


@dataclass(frozen=True)
class TopicTable:
    """What synthesis cannot read from a registry for a topic's Athena tables (see infra/table_columns.py):
    `schema`, the Avro record schema of its values (declared as `schema`, or as `columns`, a map of field name to
    Avro type), and `field_values`, the values of partitioning fields that get an enum projection."""

    schema: dict | None
    field_values: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class CatalogSettings:
    """The Glue database, the first day time-partitioned tables project, and per topic its TopicTable."""

    database: str
    time_range_start: date
    tables: dict[str, TopicTable]


@dataclass(frozen=True)
class IcebergSettings:
    """When `sink-engine iceberg maintain` runs for each IcebergFormat connector: `maintenance_schedule` (an
    EventBridge schedule expression), or the connector's own in `connector_schedules` (name -> expression; a
    continuous connector without one: hourly, infra/constructs/maintenance.py); and
    `table_bucket`, the name of the S3 table bucket the data stack creates for S3 Tables connectors (None: none)."""

    maintenance_schedule: str
    connector_schedules: dict[str, str]
    table_bucket: str | None = None  # the S3 table bucket the data stack creates (`iceberg.catalog.type=rest`)


@dataclass(frozen=True)
class RestoreSettings:
    """Where `sink-engine restore` may produce, per connector (`restore.connectors.<name>.target_topics`): topic
    names, or prefixes ending in `*`. A connector without an entry has no restore deployed: its job role gets no
    read of its objects and no write to any topic, and the trigger refuses its restore requests."""

    target_topics: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def targets_of(self, connector: str) -> tuple[str, ...]:
        return self.target_topics.get(connector, ())


@dataclass(frozen=True)
class ContinuousConnector:
    """A connector whose job the trigger keeps running (`continuous.connectors.<name>`): `freshness_alarm_seconds`,
    above which the age of its oldest record read but not yet in S3 (the job's StreamFreshnessSeconds) raises its
    `Freshness-<name>` alarm; `max_failed_attempts_per_hour`, the STREAMING job run's retry policy (EMR Serverless
    retries a failed attempt at most that many times an hour, 1 to 10, 5 by AWS's default)."""

    freshness_alarm_seconds: int
    max_failed_attempts_per_hour: int = 5


@dataclass(frozen=True)
class ContinuousSettings:
    """The connectors that run continuously (`continuous.connectors.<name>`): the trigger keeps one EMR Serverless
    STREAMING job run of `sink-engine run --continuous` going for each (infra/README.md, "Continuous connectors").
    A connector without an entry gets bounded runs."""

    connectors: dict[str, ContinuousConnector] = field(default_factory=dict)

    def of(self, connector: str) -> ContinuousConnector | None:
        return self.connectors.get(connector)


@dataclass(frozen=True)
class SchemaRegistrySettings:
    """The Schema Registry of the Confluent Cloud connector files (`connector.class` S3_SINK) whose AVRO, PROTOBUF
    or JSON_SR input names none (Cloud finds its own): `url`, and `user_info`, the basic-auth `user:password` as a
    `${secrets:...}` or `${ssm:...}` reference (the whole value, or the part after `user:`), or None. Synthesis
    writes them into such a file as it publishes it (infra/connectors.py)."""

    url: str
    user_info: str | None


@dataclass(frozen=True)
class ConnectorPolicy:
    """How synthesis treats the connector files: with `refuse_ignored_keys`, a key the engine ignores (unknown to
    the S3 sink, Kafka Connect and the engine; config/key_policy.py) fails `cdk synth` naming file and key instead
    of being a warning."""

    refuse_ignored_keys: bool = False


@dataclass(frozen=True)
class Settings:
    """One environment: where it deploys, what it reads and how it is sized and kept."""

    env: str
    source: str
    account: str
    region: str
    bucket_name: str
    table_name: str
    protect_data: bool
    kafka_partitions: int
    msk: MskSettings
    network: NetworkSettings
    emr: EmrSettings
    trigger: TriggerSettings
    retention: RetentionSettings
    alarms: AlarmSettings
    catalog: CatalogSettings
    iceberg: IcebergSettings
    schema_registry: SchemaRegistrySettings | None = None
    connectors: ConnectorPolicy = ConnectorPolicy()
    restore: RestoreSettings = RestoreSettings()
    continuous: ContinuousSettings = ContinuousSettings()
    # the customer managed key of the account's CDK bootstrap (its asset bucket's SSE-KMS key), or None (SSE-S3)
    cdk_bootstrap_kms_key_arn: str | None = None
    # how many nested stacks of the service stack hold the connectors' own resources (infra/stacks/connectors.py);
    # 0: the service stack holds them
    connector_stacks: int = 0

    @property
    def connectors_dir(self) -> Path:
        return Path(__file__).parent / "connectors" / self.env


def load_settings(env: str | None, directory: Path = ENVIRONMENTS_DIR) -> Settings:
    """Read and validate the settings of `env` (the `-c env=...` context value)."""
    if not env:
        raise SettingsError("cdk context", "env", "is required: pass -c env=<name>, one of " + _known(directory))
    path = directory / f"{env}.json"
    if not path.is_file():
        raise SettingsError("cdk context", "env", f"no settings file {path.name}; known: {_known(directory)}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise SettingsError(path.name, "(file)", f"is not valid JSON: {e}") from e
    return parse_settings(env, doc, path.name)


def parse_settings(env: str, doc: Any, source: str) -> Settings:
    """Validate a settings document; raises SettingsError naming the first setting at fault."""
    r = _Reader(doc, source)
    region = r.text("region", _REGION)
    account = r.text("account", _ACCOUNT)
    msk = MskSettings(r.text("msk.cluster_arn", _CLUSTER_ARN), r.texts("msk.topics", _TOPIC))
    match = re.fullmatch(_CLUSTER_ARN, msk.cluster_arn)
    assert match is not None  # r.text checked it
    if (match["region"], match["account"]) != (region, account):
        raise SettingsError(source, "msk.cluster_arn", "must be in the environment's account and region")
    glacier = r.integer("retention.glacier_after_days", 1)
    dlq_prefix = r.text("retention.dlq_prefix", r"[A-Za-z0-9_.-]+/")
    emr = _emr(r)
    release_label = emr.release_label
    if dlq_prefix == "iceberg/":
        raise SettingsError(
            source, "retention.dlq_prefix", "'iceberg/' is where Iceberg tables lie: their files must not expire"
        )
    return Settings(
        env=env,
        source=source,
        account=account,
        region=region,
        bucket_name=r.text("bucket_name", _BUCKET),
        table_name=r.text("table_name", _TABLE),
        protect_data=r.boolean("protect_data"),
        kafka_partitions=r.integer("kafka_partitions", 1, 10_000),
        msk=msk,
        network=_network(r, region),
        emr=emr,
        trigger=TriggerSettings(
            backoff_base_seconds=r.integer("trigger.backoff_base_seconds", 1, 3_600),
            backoff_cap_seconds=r.integer(
                "trigger.backoff_cap_seconds", r.integer("trigger.backoff_base_seconds", 1), 86_400
            ),
            idle_flush_minutes=r.integer("trigger.idle_flush_minutes", 1, 1440),
            batch_size=r.integer("trigger.batch_size", 1, 10_000),
            max_batching_window_seconds=r.integer("trigger.max_batching_window_seconds", 0, 300),
            run_claim_minutes=r.integer("trigger.run_claim_minutes", 1, 120),
            connectors_per_run=(
                r.integer("trigger.connectors_per_run", 1, MAX_CONNECTORS_PER_RUN)
                if r.present("trigger.connectors_per_run")
                else CONNECTORS_PER_RUN
            ),
        ),
        retention=RetentionSettings(
            glacier_after_days=glacier,
            deep_archive_after_days=r.integer("retention.deep_archive_after_days", glacier + 90),
            dlq_prefix=dlq_prefix,
            dlq_expire_after_days=r.integer("retention.dlq_expire_after_days", 1),
            access_logs_expire_after_days=r.integer("retention.access_logs_expire_after_days", 1),
            log_retention_days=r.choice_int("retention.log_retention_days", _LOG_RETENTION_DAYS),
        ),
        alarms=AlarmSettings(
            pending_records=r.integer("alarms.pending_records", 1),
            pending_age_seconds=r.integer("alarms.pending_age_seconds", 60),
            email=r.optional_text("alarms.email", r"[^@\s]+@[^@\s]+\.[^@\s]+"),
        ),
        catalog=CatalogSettings(
            r.text("catalog.database", r"[a-z0-9_]{1,255}"), r.day("catalog.time_range_start"), _tables(r, msk.topics)
        ),
        iceberg=_iceberg(r),
        schema_registry=_schema_registry(r),
        connectors=_connector_policy(r),
        restore=_restore(r),
        continuous=_continuous(r, release_label),
        cdk_bootstrap_kms_key_arn=_bootstrap_key(r, region, account),
        connector_stacks=r.integer("connector_stacks", 0, MAX_CONNECTOR_STACKS) if r.present("connector_stacks") else 0,
    )


def _schema_registry(r: _Reader) -> SchemaRegistrySettings | None:
    if not r.present("schema_registry"):
        return None
    r.section("schema_registry", ("url", "user_info"))
    user_info = r.optional_text("schema_registry.user_info", r"[^:\s]+:.+|\$\{.+\}")
    if user_info is not None:
        try:
            references({"user_info": user_info})
        except ConfigError as e:
            raise SettingsError(r.source, "schema_registry.user_info", e.reason) from None
        if clear_text_credential("basic.auth.user.info", user_info):
            raise SettingsError(
                r.source,
                "schema_registry.user_info",
                "holds a password in clear text; the settings "
                "are carried in the CloudFormation template: give user:${secrets:<secret name>:<json "
                "key>} or ${secrets:<secret name>:<json key>} (or ${ssm:<parameter name>})",
            )
    return SchemaRegistrySettings(r.text("schema_registry.url", _REGISTRY_URL), user_info)


def _connector_policy(r: _Reader) -> ConnectorPolicy:
    """The optional `connectors` section: {"refuse_ignored_keys": true|false} (default false)."""
    if not r.present("connectors"):
        return ConnectorPolicy()
    r.section("connectors", ("refuse_ignored_keys",))
    return ConnectorPolicy(r.boolean("connectors.refuse_ignored_keys"))


def _restore(r: _Reader) -> RestoreSettings:
    """The optional `restore` section: {"connectors": {"<name>": {"target_topics": ["<topic>", "<prefix>*"]}}}."""
    if not r.present("restore"):
        return RestoreSettings()
    r.section("restore", ("connectors",))
    entries = r.connector_entries("restore.connectors", "target_topics", "[<topic name or prefix ending in *>, ...]")
    return RestoreSettings({name: r.texts(path, _TARGET_TOPIC) for name, path in entries.items()})


# EMR Serverless STREAMING job runs (StartJobRun `mode`) need release 7.1.0 or later, and a cancellation with a grace
# period (CancelJobRun `shutdownGracePeriodInSeconds`), with which the trigger stops a continuous job so that it commits
# what it closed and releases its lease, 7.9.0 or later (infra/README.md, "Continuous connectors").
CONTINUOUS_FROM_RELEASE = (7, 9)
CONTINUOUS_KEYS = ("freshness_alarm_seconds", "max_failed_attempts_per_hour")


def _continuous(r: _Reader, release_label: str) -> ContinuousSettings:
    """The optional `continuous` section: {"connectors": {"<name>": {"freshness_alarm_seconds": N,
    "max_failed_attempts_per_hour": M?}}}; refused naming `emr.release_label` on a release before 7.9.0."""
    if not r.present("continuous"):
        return ContinuousSettings()
    r.section("continuous", ("connectors",))
    connectors = {}
    for name in r.mapping("continuous.connectors"):
        where = f"continuous.connectors.{name}"
        if not re.fullmatch(_CONNECTOR, name) or not isinstance(r.mapping(where), dict):
            raise SettingsError(r.source, where, 'must be a connector name mapped to {"freshness_alarm_seconds": N}')
        r.section(where, CONTINUOUS_KEYS)
        retries = f"{where}.max_failed_attempts_per_hour"
        connectors[name] = ContinuousConnector(
            r.integer(f"{where}.freshness_alarm_seconds", 10, 86_400),
            r.integer(retries, 1, 10) if r.present(retries) else 5,
        )
    major, minor = (int(part) for part in release_label.removeprefix("emr-").split(".")[:2])
    if connectors and (major, minor) < CONTINUOUS_FROM_RELEASE:
        raise SettingsError(
            r.source,
            "emr.release_label",
            f"{release_label} cannot run continuous connectors ({', '.join(connectors)}): STREAMING job runs need "
            "emr-7.1.0 or later and their cancellation with a grace period emr-7.9.0 or later",
        )
    return ContinuousSettings(connectors)


def _bootstrap_key(r: _Reader, region: str, account: str) -> str | None:
    """`cdk_bootstrap_kms_key_arn`: the key `cdk bootstrap --bootstrap-kms-key-id` gave the asset bucket, which
    the job roles must decrypt the job's archive and entry point with (absent: the bucket uses SSE-S3)."""
    arn = r.optional_text("cdk_bootstrap_kms_key_arn", _KMS_KEY_ARN)
    if arn is not None:
        match = re.fullmatch(_KMS_KEY_ARN, arn)
        assert match is not None  # r.optional_text checked it
        if (match["region"], match["account"]) != (region, account):
            raise SettingsError(
                r.source,
                "cdk_bootstrap_kms_key_arn",
                "must be a key of the environment's account and region (the bootstrap bucket's)",
            )
    return arn


def _iceberg(r: _Reader) -> IcebergSettings:
    schedules = {}
    if r.present("iceberg.connectors"):
        entries = r.connector_entries("iceberg.connectors", "maintenance_schedule", "<schedule expression>")
        schedules = {name: r.text(path, _SCHEDULE) for name, path in entries.items()}
    return IcebergSettings(
        r.text("iceberg.maintenance_schedule", _SCHEDULE),
        schedules,
        r.optional_text("iceberg.table_bucket", _TABLE_BUCKET),
    )


def _network(r: _Reader, region: str) -> NetworkSettings:
    egress = r.choice("network.egress", EGRESS)
    route_tables, reused = "network.route_table_ids", "network.gateway_endpoint_ids"
    gateway_ids = _gateway_endpoint_ids(r) if r.present(reused) else {}
    if set(gateway_ids) != set(GATEWAY_SERVICES):
        route_table_ids = r.texts(route_tables, _ROUTE_TABLE)
    elif r.present(route_tables):
        raise SettingsError(
            r.source,
            route_tables,
            "is used only to create gateway endpoints: with every one reused (network.gateway_endpoint_ids) the "
            "stack creates none",
        )
    else:
        route_table_ids = ()
    subnets = r.texts("network.subnet_ids", _SUBNET)
    return NetworkSettings(
        vpc_id=r.text("network.vpc_id", _VPC),
        subnet_ids=subnets,
        security_group_ids=r.texts("network.security_group_ids", _SECURITY_GROUP),
        egress=egress,
        route_table_ids=route_table_ids,
        gateway_endpoint_ids=gateway_ids,
        subnet_zone_ids=_subnet_zones(r, subnets, region),
    )


def _subnet_zones(r: _Reader, subnets: tuple[str, ...], region: str) -> dict[str, str]:
    """`network.subnet_zone_ids` (subnet -> its AZ ID), required where EMR Serverless runs in some zones only
    (infra/zones.py), each subnet's zone checked."""
    path = "network.subnet_zone_ids"
    if not r.present(path) and not zones.limited(region):
        return {}
    if not r.present(path):
        raise SettingsError(
            r.source,
            path,
            f"is required in {region}, where EMR Serverless runs in some Availability Zones only: map each of "
            "network.subnet_ids to its AZ ID (aws ec2 describe-subnets --subnet-ids ... "
            "--query 'Subnets[].[SubnetId,AvailabilityZoneId]')",
        )
    stated = r.mapping(path)
    if set(stated) != set(subnets):
        raise SettingsError(
            r.source, path, f"must map exactly the subnets of network.subnet_ids ({', '.join(subnets)})"
        )
    found = {subnet: r.text(f"{path}.{subnet}", zones.ZONE_ID) for subnet in subnets}
    faults = zones.zone_faults(region, found)
    if faults:
        subnet, why = faults[0]
        raise SettingsError(r.source, f"{path}.{subnet}", f"subnet {subnet} {why}")
    return found


def _gateway_endpoint_ids(r: _Reader) -> dict[str, str]:
    path = "network.gateway_endpoint_ids"
    ids = r.mapping(path)
    if not ids or not set(ids) <= set(GATEWAY_SERVICES):
        raise SettingsError(
            r.source,
            path,
            f"must map one or more of {', '.join(GATEWAY_SERVICES)} to the id "
            "(vpce-...) of an existing gateway endpoint of the subnets' route tables",
        )
    return {service: r.text(f"{path}.{service}", _VPC_ENDPOINT) for service in GATEWAY_SERVICES if service in ids}


def _emr(r: _Reader) -> EmrSettings:
    release = r.text("emr.release_label", _RELEASE)
    if release not in EMR_PYTHONS:
        raise SettingsError(
            r.source,
            "emr.release_label",
            f"{release} is not in settings.EMR_PYTHONS (known: "
            f"{', '.join(EMR_PYTHONS)}): the interpreters of its image are unknown",
        )
    python = r.text("emr.python", r"3\.\d+")
    if python not in EMR_PYTHONS[release]:
        raise SettingsError(
            r.source,
            "emr.python",
            f"{release}'s image has no /usr/bin/python{python} (it has {', '.join(EMR_PYTHONS[release])})",
        )
    if tuple(map(int, python.split("."))) < ENGINE_PYTHON:
        raise SettingsError(
            r.source,
            "emr.python",
            f"{python} is older than the job needs (Python {'.'.join(map(str, ENGINE_PYTHON))} or later, "
            f"pyproject.toml's requires-python); emr-7.1.0 and later images have /usr/bin/python3.11",
        )
    return EmrSettings(
        release_label=release,
        architecture=r.choice("emr.architecture", ("ARM64", "X86_64")),
        python=python,
        max_cpu=r.text("emr.max_capacity.cpu", _CAPACITY["cpu"]),
        max_memory=r.text("emr.max_capacity.memory", _CAPACITY["memory"]),
        max_disk=r.text("emr.max_capacity.disk", _CAPACITY["disk"]),
        idle_timeout_minutes=r.integer("emr.idle_timeout_minutes", 1, 10_080),
        job_timeout_minutes=r.integer("emr.job_timeout_minutes", 5, 1440),
        max_executors_per_run=(
            r.integer("emr.max_executors_per_run", 1, 1000) if r.present("emr.max_executors_per_run") else 3
        ),
        concurrent_runs=r.integer("emr.concurrent_runs", 1, 1000) if r.present("emr.concurrent_runs") else None,
        interpreter_source=r.choice("emr.interpreter", INTERPRETERS) if r.present("emr.interpreter") else "image",
        account_vcpu_quota=(
            r.integer("emr.account_vcpu_quota", 1)
            if r.present("emr.account_vcpu_quota")
            else EmrSettings.account_vcpu_quota
        ),
    )


def _tables(r: _Reader, topics: tuple[str, ...]) -> dict[str, TopicTable]:
    tables = {}
    for topic, entry in r.mapping("catalog.tables").items():
        path = f"catalog.tables.{topic}"
        if topic not in topics:
            raise SettingsError(r.source, path, "is not one of msk.topics")
        if not isinstance(entry, dict) or not set(entry) <= {"schema", "columns", "field_values"}:
            raise SettingsError(
                r.source,
                path,
                "must be an object with 'schema' (an Avro record schema) or "
                "'columns' (field name -> Avro type), and optionally 'field_values'",
            )
        if "schema" in entry and "columns" in entry:
            raise SettingsError(r.source, path, "declares both 'schema' and 'columns': give one")
        schema = entry.get("schema")
        if "columns" in entry:
            columns = entry["columns"]
            if not isinstance(columns, dict) or not columns:
                raise SettingsError(r.source, f"{path}.columns", "must map field names to Avro types")
            name = re.sub(r"[^A-Za-z0-9_]", "_", topic)
            schema = {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in columns.items()]}
        if schema is not None:
            _check_avro_record(r.source, f"{path}.{'columns' if 'columns' in entry else 'schema'}", schema)
        values = entry.get("field_values", {})
        if not isinstance(values, dict) or not all(
            isinstance(v, list) and v and all(isinstance(x, str) for x in v) for v in values.values()
        ):
            raise SettingsError(r.source, f"{path}.field_values", "must map field names to non-empty lists of strings")
        tables[topic] = TopicTable(schema, {field: tuple(v) for field, v in values.items()})
    return tables


def _check_avro_record(source: str, path: str, schema) -> None:
    try:
        parsed = fastavro.parse_schema(schema, _write_hint=False)
    except (SchemaParseException, ValueError, TypeError, KeyError, AttributeError) as e:
        raise SettingsError(source, path, f"is not a valid Avro schema: {e}") from None
    if not isinstance(parsed, dict) or parsed.get("type") != "record":
        raise SettingsError(source, path, "must be an Avro record: its fields are the table's columns")


_LOG_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)


class _Reader:
    """Typed access to a nested settings document by dotted path; every failure names the path."""

    def __init__(self, doc: Any, source: str):
        if not isinstance(doc, dict):
            raise SettingsError(source, "(file)", "must be a JSON object")
        self._doc, self.source = doc, source

    def _get(self, path: str, required: bool = True) -> Any:
        node: Any = self._doc
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                if required:
                    raise SettingsError(self.source, path, "is required")
                return None
            node = node[part]
        return node

    def present(self, path: str) -> bool:
        return self._get(path, required=False) is not None

    def _fail(self, path: str, message: str) -> SettingsError:
        return SettingsError(self.source, path, message)

    def text(self, path: str, pattern: str) -> str:
        value = self._get(path)
        if not isinstance(value, str) or not re.fullmatch(pattern, value):
            raise self._fail(path, f"{value!r} does not match {pattern}")
        return value

    def optional_text(self, path: str, pattern: str) -> str | None:
        return None if self._get(path, required=False) is None else self.text(path, pattern)

    def texts(self, path: str, pattern: str) -> tuple[str, ...]:
        value = self._get(path)
        if not isinstance(value, list) or not value:
            raise self._fail(path, "must be a non-empty list")
        for item in value:
            if not isinstance(item, str) or not re.fullmatch(pattern, item):
                raise self._fail(path, f"item {item!r} does not match {pattern}")
        if len(set(value)) != len(value):
            raise self._fail(path, "has duplicates")
        return tuple(value)

    def integer(self, path: str, minimum: int, maximum: int | None = None) -> int:
        value = self._get(path)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(path, f"{value!r} is not an integer")
        if value < minimum or (maximum is not None and value > maximum):
            raise self._fail(path, f"{value} is outside {minimum}..{maximum if maximum is not None else ''}")
        return value

    def day(self, path: str) -> date:
        value = self._get(path)
        try:
            return date.fromisoformat(value)
        except (TypeError, ValueError):
            raise self._fail(path, f"{value!r} is not a date (YYYY-MM-DD)") from None

    def mapping(self, path: str) -> dict:
        value = self._get(path)
        if not isinstance(value, dict):
            raise self._fail(path, "must be a JSON object")
        return value

    def section(self, path: str, known: tuple[str, ...]) -> dict:
        """The JSON object at `path`, refused naming the first key that is not one of `known`."""
        value = self.mapping(path)
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise self._fail(f"{path}.{unknown[0]}", f"is not a setting (known: {', '.join(known)})")
        return value

    def connector_entries(self, path: str, key: str, value: str) -> dict[str, str]:
        """`path`'s map of connector names to `{key: <value>}`: each name's path to its `key`; an entry otherwise
        shaped is refused naming it (`value` describes what `key` takes)."""
        entries = {}
        for name, entry in self.mapping(path).items():
            where = f"{path}.{name}"
            if not re.fullmatch(_CONNECTOR, name) or not isinstance(entry, dict) or set(entry) != {key}:
                raise self._fail(where, f'must be a connector name mapped to {{"{key}": {value}}}')
            entries[name] = f"{where}.{key}"
        return entries

    def boolean(self, path: str) -> bool:
        value = self._get(path)
        if not isinstance(value, bool):
            raise self._fail(path, f"{value!r} is not true or false")
        return value

    def choice(self, path: str, choices: tuple[str, ...]) -> str:
        value = self._get(path)
        if value not in choices:
            raise self._fail(path, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def choice_int(self, path: str, choices: tuple[int, ...]) -> int:
        value = self.integer(path, 1)
        if value not in choices:
            raise self._fail(path, f"{value} is not one of the CloudWatch Logs retention periods")
        return value


def _known(directory: Path) -> str:
    return ", ".join(sorted(p.stem for p in directory.glob("*.json"))) or "(none)"
