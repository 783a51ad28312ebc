"""What one connector's job run may do in AWS: the statements of its own EMR job runtime role.

Each connector gets a role of its own (see `infra/constructs/job_role.py`), so its policy stays small (IAM's
10,240-character limit for a role's inline policies holds whatever the number of connectors) and one
connector's runs cannot touch another's data, offsets or topics.

The statements follow what the engine calls for this connector's config, and nothing more:
- STS: with `s3.credentials.provider.class=AwsAssumeRoleCredentialsProvider`, AssumeRole on exactly
  `s3.credentials.provider.sts.role.arn`; the S3 client then signs as that role, whose own policy (and trust
  policy, naming this job role and the external id) must grant the object writes below, so the job role does not
  get them (it keeps ReadOwnConfig: the job reads its config as itself);
- S3: PutObject (PutObject, CreateMultipartUpload, UploadPart, CompleteMultipartUpload) and
  AbortMultipartUpload under `<topics.dir>/<topic>/` and the connector's dead-letter prefix;
  ListBucketMultipartUploads on the bucket (stray uploads of a completed key are aborted; the action carries no
  `s3:prefix` key, so no condition can narrow it to the connector's prefixes: it lists the names of every
  in-progress upload of the bucket, not their data); PutObjectTagging
  with `s3.object.tagging` (AWS checks it for a PutObject that carries tags, and the engine tags a multipart
  object after completing it); PutObjectAcl with `s3.acl.canned`; GetObject of its published config, and of
  its dead-letter objects with an S3 dead-letter prefix (dead letters are written once: a rerun reads the object
  an earlier attempt of its range wrote, see sink_engine/dlq/s3_destination.py);
- DynamoDB: DescribeTable (the run checks the table first), the item actions of the lease, offsets, plans and
  commits (TransactWriteItems is authorized by its item actions), BatchWriteItem (plans are deleted in
  batches), all on the offsets table and only under the connector's own partition key (`LeadingKeys`);
- KMS: `s3.sse.kms.key.id` other than the bucket's key (encrypt for uploads, decrypt for multipart parts);
- Glue: GetSchemaVersion for the AWS Glue Schema Registry converter (looked up by schema version id, which
  no schema ARN can scope);
- Secrets Manager: GetSecretValue on exactly the secrets its connector file references (`${secrets:...}`, resolved
  by the job when a run starts): a secret named by name as `<name>-??????` (Secrets Manager's suffix), by ARN as
  that ARN;
- SSM Parameter Store: GetParameter on exactly the parameters it references (`${ssm:...}`), each as
  `arn:aws:ssm:<region>:<account>:parameter/<name without its leading />` (by ARN: that ARN). A SecureString under
  the AWS managed key `aws/ssm` needs no KMS grant; one under a customer managed key needs kms:Decrypt on that key,
  which is not granted;
- CloudWatch: PutMetricData, only in the namespace `SinkEngine` (`cloudwatch:namespace`, the one condition key
  the action carries; it has no resource-level permission in use, so Resource is `*`): each run publishes its
  figures there (sink_engine/run/metrics.py);
- MSK (IAM auth): connect, read its topics, its consumer group `connect-<name>`, and for a dead-letter topic
  create/describe/read/write it, idempotently, in transactions `sink-engine-dlq.<name>.*`; for a connector file
  without `bootstrap.servers`, kafka:GetBootstrapBrokers (no resource type: `*`), the cluster's brokers;
- Restore (`sink-engine restore`, only for a connector with `restore.connectors.<name>.target_topics` in the
  environment's settings; see docs/backup-restore.md): ListBucket on the bucket with `s3:prefix` under the
  connector's `<topics.dir>/<topic>/` prefixes and GetObject below them (the objects and their key and header
  sidecars; with an assumed S3 role, that role's policy must grant them instead, as the writes); the item actions of
  the restore lease and its `RESTORED#` checkpoint on the offsets table, only under the leading keys
  `restore#<target topic>` of its targets (sink_engine/offsets/layout.py; the connector's committed offsets it
  reads are under its own key, granted above); and on the MSK cluster DescribeTopic, ReadData (the tail scan that
  finds what an earlier attempt produced) and WriteData on exactly the target topics' ARNs (a prefix `<name>*` is an ARN
  ending in `*`, which MSK matches as a wildcard), and WriteDataIdempotently on the cluster. No CreateTopic: a
  target topic must exist. Without the setting none of these is granted: the job role cannot read its own
  objects back.
- IcebergFormat (pyiceberg's Glue catalog, infra/iceberg.py): glue:GetDatabase on its database (a table's default
  location, and whether the database is S3 Tables', asked at every create and commit); GetTable, UpdateTable (a
  commit) and, with auto-create, CreateTable on its tables; the files under each table's location (GetObject,
  PutObject, AbortMultipartUpload: pyarrow writes data and metadata files, in parts when large, and reads
  metadata, manifests and, in `iceberg maintain`, data files); and s3:ListBucket on the bucket without a prefix
  condition: pyiceberg checks that a new metadata file does not exist yet, and S3 answers a missing key with 404
  only to a principal that may list the bucket (403 otherwise, which fails the commit). Neither a commit nor
  `iceberg maintain` deletes files; a continuous connector's driver deletes the manifests and keys files its tasks
  staged once a snapshot holds what they describe (target/iceberg_tables/stream_commit.py), so its role gets
  s3:DeleteObject on
  `iceberg/<database>/<table>/metadata/sink-engine-stage-*` of its tables, no other object. Its STAGE# items are
  under its own partition key: the DynamoDB grants above cover them. No objects under `<topics.dir>/`. And
  lakeformation:GetDataLakeSettings (on `*`: the action has no resource types, Service Authorization Reference,
  "Actions, resources, and condition keys for AWS Lake Formation"), with which the doctor checks that Lake
  Formation leaves the database and tables to IAM (sink_engine/target/iceberg_tables/lake_formation.py).
- IcebergFormat on S3 Tables (`iceberg.catalog.type=rest`, the stack's table bucket): the s3tables actions AWS
  maps the Iceberg REST operations the engine calls to (Amazon S3 user guide, "Accessing tables using the Amazon
  S3 Tables Iceberg REST endpoint"): getConfig (the catalog's start) s3tables:GetTableBucket on the bucket;
  loadTable GetTableMetadataLocation and GetTableData, updateTable (a commit, also of `iceberg maintain`)
  UpdateTableMetadataLocation, PutTableData and GetTableData, on the bucket's tables (`<bucket arn>/table/*`: a
  table's ARN ends in its id, not its name, so no ARN names one table) of the connector's namespaces only
  (`s3tables:namespace`, which the Service Authorization Reference lists for each of these actions, "Actions,
  resources, and condition keys for Amazon S3 Tables"); with auto-create, createTable CreateTable on the bucket,
  for those namespaces only, and PutTableData. GetTableData and PutTableData also authorize the S3 requests on the
  tables' own storage (data files, manifests) that pyarrow makes. loadNamespaceMetadata (the doctor's check that
  the namespace exists) s3tables:GetNamespace on the bucket, for the connector's namespaces only
  (`s3tables:namespace`; the action's resource is the table bucket: "GetNamespace", Amazon S3 API Reference,
  https://docs.aws.amazon.com/AmazonS3/latest/API/API_s3TableBuckets_GetNamespace.html). No other namespace
  action: the stack creates the namespaces. A fan-out connector's namespaces are those it declares
  (`iceberg.tables.route-namespaces`, `iceberg.tables.default-namespace`), a Glue database's likewise: its tables are
  `table/<database>/*` and their files `iceberg/<database>/*/*` (infra/iceberg.py), and `iceberg maintain`
  lists the tables of those databases (glue:GetTables on them; on S3 Tables, s3tables:ListTables of those
  namespaces), no other.
  No delete, no S3 grant on the data lake for the tables: a continuous
  connector's driver leaves its spent staged files to the table bucket's unreferenced file removal (S3 Tables serves
  no DeleteObject, IcebergSettings.deletes_spent_stages).

Documents are plain JSON (CloudFormation tokens allowed in the physical names), so tests can compare them with
the calls the engine makes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.connectors import ConnectorSpec
from infra.iceberg import ANY_TABLE, IcebergTables
from sink_engine.convert.settings import ConverterSettings
from sink_engine.run.metrics import NAMESPACE as METRICS_NAMESPACE
from sink_engine.secrets import PARAMETER_STORE, SECRETS_MANAGER, references
from sink_engine.storage.credentials import S3Credentials
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.target.iceberg_tables.settings import STAGED_FILES

GLUE_CONVERTER = "glueavro"


@dataclass(frozen=True)
class JobPhysicalNames:
    """The physical resources a job role's statements name (tokens allowed)."""

    bucket_name: str
    table_arn: str
    cluster_arn: str
    dlq_prefix: str  # retention.dlq_prefix, e.g. "dlq/"
    region: str
    account: str

    def msk_arn(self, kind: str, name: str) -> str:
        """ARN of an MSK `topic`, `group` or `transactional-id` of the cluster."""
        base, path = self.cluster_arn.split(":cluster/")
        cluster_name, cluster_uuid = path.split("/")[:2]
        return f"{base}:{kind}/{cluster_name}/{cluster_uuid}/{name}"


def job_statements(spec: ConnectorSpec, names: JobPhysicalNames) -> list[dict]:
    """The connector-scoped statements of `spec`'s job role (see the module docstring)."""
    config, options = spec.config, ObjectOptions.from_config(spec.config)
    bucket = f"arn:aws:s3:::{names.bucket_name}"
    prefixes = [f"{bucket}/{p}*" for p in spec.data_prefixes()] + [f"{bucket}/{names.dlq_prefix}{spec.name}/*"]
    object_actions = ["s3:PutObject", "s3:AbortMultipartUpload"]
    if options.tagging:
        object_actions.append("s3:PutObjectTagging")
    if options.acl:
        object_actions.append("s3:PutObjectAcl")
    assumed = assumed_role_arn(spec)
    s3_client_statements = [
        _allow("WriteOwnPrefixes", object_actions, prefixes),
        # after completing a multipart object, the job lists the key's uploads and aborts the strays
        # (storage/multipart.py). The SAR gives ListBucketMultipartUploads no s3:prefix key (only ListBucket and
        # ListBucketVersions carry it): a prefix condition would deny every call, so the grant is the whole bucket.
        # It shows the keys, upload ids, initiators and start times of all in-progress uploads of the bucket,
        # none of their data; aborting stays limited to the connector's prefixes (WriteOwnPrefixes).
        *([_allow("ListUploads", ["s3:ListBucketMultipartUploads"], [bucket])] if spec.data_prefixes() else []),
        *(
            [_allow("ReadOwnDeadLetters", ["s3:GetObject"], [f"{bucket}/{names.dlq_prefix}{spec.name}/*"])]
            if spec.dlq_s3_prefix
            else []
        ),
        *(_backup_reads(spec, bucket) if spec.restore_targets else []),
    ]
    statements = [
        # the S3 client's objects: signed by the job role, or by the role it assumes (whose own policy grants them)
        *([_allow("AssumeS3WriterRole", ["sts:AssumeRole"], [assumed])] if assumed else s3_client_statements),
        _allow("ReadOwnConfig", ["s3:GetObject"], [f"{bucket}/{spec.config_key}"]),
        _allow("DescribeOffsetsTable", ["dynamodb:DescribeTable"], [names.table_arn]),
        _allow(
            "OwnOffsetsLeaseAndPlans",
            [
                "dynamodb:GetItem",
                "dynamodb:PutItem",
                "dynamodb:UpdateItem",
                "dynamodb:DeleteItem",
                "dynamodb:Query",
                "dynamodb:ConditionCheckItem",
                "dynamodb:BatchWriteItem",
            ],
            [names.table_arn],
            {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [spec.name]}},
        ),
        *_kms_statements(options.kms_key_id, names),
        _allow(
            "PublishRunMetrics",
            ["cloudwatch:PutMetricData"],
            ["*"],
            {"StringEquals": {"cloudwatch:namespace": METRICS_NAMESPACE}},
        ),
        *_msk_statements(spec, names),
        *(_restore_statements(spec, names) if spec.restore_targets else []),
        *(_iceberg_statements(spec.iceberg, names, continuous=spec.continuous is not None) if spec.iceberg else []),
    ]
    if GLUE_CONVERTER in (ConverterSettings.from_config(config, role).name for role in ("value", "key")):
        statements.append(_allow("ReadGlueSchemaVersions", ["glue:GetSchemaVersion"], ["*"]))
    for action, resources in reference_reads(spec, names.region, names.account).items():
        if resources:
            statements.append(_allow(_READ_SIDS[action], [action], resources))
    return statements


def assumed_role_arn(spec: ConnectorSpec) -> str | None:
    """The role `spec`'s S3 client assumes (`s3.credentials.provider.sts.role.arn` with
    AwsAssumeRoleCredentialsProvider), or None."""
    assume = S3Credentials.from_config(spec.config).assume  # set with AwsAssumeRoleCredentialsProvider only
    return assume.role_arn if assume else None


_READ_SIDS = {SECRETS_MANAGER.iam_action: "ReadOwnSecrets", PARAMETER_STORE.iam_action: "ReadOwnParameters"}


def reference_reads(spec: ConnectorSpec, region: str, account: str) -> dict[str, list[str]]:
    """The read action of each store (secretsmanager:GetSecretValue, ssm:GetParameter, in that order) -> the IAM
    resources of what `spec`'s connector file references there, sorted, each once (empty: nothing)."""
    refs = references(spec.document)
    return {
        source.iam_action: sorted({r.arn_pattern(region, account) for r in refs if r.source == source})
        for source in (SECRETS_MANAGER, PARAMETER_STORE)
    }


RESTORE_LEASE_PREFIX = "restore#"  # the leading key of a restore's lease: restore#<target topic>


def _backup_reads(spec: ConnectorSpec, bucket: str) -> list[dict]:
    """What a restore reads of the connector's objects: its data prefixes, listed and read."""
    prefixes = spec.data_prefixes()
    return [
        _allow(
            "ListOwnBackups", ["s3:ListBucket"], [bucket], {"StringLike": {"s3:prefix": [f"{p}*" for p in prefixes]}}
        ),
        _allow("ReadOwnBackups", ["s3:GetObject"], [f"{bucket}/{p}*" for p in prefixes]),
    ]


def _restore_statements(spec: ConnectorSpec, names: JobPhysicalNames) -> list[dict]:
    """The restore lease of each target, and the target topics written idempotently (see the module docstring)."""
    statements = [
        # the lease (put, read, renewed and released by updates) and the RESTORED# checkpoint (read; put at each
        # confirm in a transaction with a check of the lease's epoch)
        _allow(
            "RestoreLease",
            ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"],
            [names.table_arn],
            {
                "ForAllValues:StringLike": {
                    "dynamodb:LeadingKeys": [f"{RESTORE_LEASE_PREFIX}{t}" for t in spec.restore_targets]
                }
            },
        ),
        _allow(
            "WriteRestoreTargets",
            ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData", "kafka-cluster:WriteData"],
            [names.msk_arn("topic", t) for t in spec.restore_targets],
        ),
    ]
    if not spec.dlq_topic:  # the dead-letter topic's statements grant it already
        statements.append(_allow("WriteIdempotently", ["kafka-cluster:WriteDataIdempotently"], [names.cluster_arn]))
    return statements


def _kms_statements(key_id: str | None, names: JobPhysicalNames) -> list[dict]:
    """Use of a connector's own SSE-KMS key: by ARN, by key id, or by alias (through kms:ResourceAliases)."""
    if not key_id:
        return []
    actions = ["kms:GenerateDataKey", "kms:Decrypt"]
    if key_id.startswith("arn:"):
        return [_allow("UseOwnKmsKey", actions, [key_id])]
    keys = f"arn:aws:kms:{names.region}:{names.account}:key/"
    if key_id.startswith("alias/"):
        return [
            _allow(
                "UseOwnKmsKey", actions, [f"{keys}*"], {"ForAnyValue:StringEquals": {"kms:ResourceAliases": [key_id]}}
            )
        ]
    return [_allow("UseOwnKmsKey", actions, [f"{keys}{key_id}"])]


def _glue_arns(tables: IcebergTables, names: JobPhysicalNames) -> tuple[str, list[str], list[str]]:
    """The ARNs of the Glue catalog, the databases and the tables of an Iceberg connector (`table/<database>/*`: any
    table of a database its fan-out declares)."""
    glue = f"arn:aws:glue:{names.region}:{names.account}"
    return (
        f"{glue}:catalog",
        [f"{glue}:database/{database}" for database in tables.databases],
        [f"{glue}:table/{database}/{table}" for database, table in tables.tables],
    )


def _iceberg_statements(tables: IcebergTables, names: JobPhysicalNames, *, continuous: bool) -> list[dict]:
    """An Iceberg connector's Glue tables and their files (with `continuous`, the deletion of its spent staged
    files), or its S3 Tables (see the module docstring)."""
    fan_out = [database for database, table in tables.tables if table == ANY_TABLE]
    if tables.table_bucket_arn:
        return s3_tables_statements(
            tables.table_bucket_arn, tables.databases, auto_create=tables.auto_create, lists=bool(fan_out)
        )
    catalog, databases, table_arns = _glue_arns(tables, names)
    bucket = f"arn:aws:s3:::{names.bucket_name}"
    table_actions = ["glue:GetTable", "glue:UpdateTable"] + (["glue:CreateTable"] if tables.auto_create else [])
    prefixes = [f"{bucket}/{tables.table_prefix(database, table)}" for database, table in tables.tables]
    return [
        _allow("ReadIcebergDatabase", ["glue:GetDatabase"], [catalog, *databases]),
        # the doctor's check that Lake Formation leaves the tables to IAM (no resource-level permissions)
        _allow("ReadLakeFormationSettings", ["lakeformation:GetDataLakeSettings"], ["*"]),
        _allow("CommitIcebergTables", table_actions, [catalog, *databases, *table_arns]),
        _allow(
            "IcebergTableFiles",
            ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
            [f"{p}*" for p in prefixes],
        ),
        _allow("FindIcebergFiles", ["s3:ListBucket"], [bucket]),
        # `iceberg maintain` of a fan-out connector lists the tables of the databases it declares
        *([_allow("ListOwnIcebergTables", ["glue:GetTables"], [catalog, *databases, *table_arns])] if fan_out else []),
        *(
            [_allow("DeleteSpentStageFiles", ["s3:DeleteObject"], [f"{p}{STAGED_FILES}*" for p in prefixes])]
            if continuous
            else []
        ),
    ]


def s3_tables_statements(
    bucket_arn: str, namespaces: tuple[str, ...], *, auto_create: bool, lists: bool = False
) -> list[dict]:
    """The S3 Tables grants of a connector writing tables of `namespaces` in the table bucket `bucket_arn` (see the
    module docstring): every table action conditioned on `s3tables:namespace`, which the SAR lists for each; with
    `lists` (fan-out), ListTables of those namespaces."""
    own = {"StringEquals": {"s3tables:namespace": list(namespaces)}}
    return [
        _allow("ReadTableBucket", ["s3tables:GetTableBucket"], [bucket_arn]),
        _allow("ReadOwnNamespace", ["s3tables:GetNamespace"], [bucket_arn], own),
        *([_allow("CreateOwnTables", ["s3tables:CreateTable"], [bucket_arn], own)] if auto_create else []),
        *([_allow("ListOwnTables", ["s3tables:ListTables"], [bucket_arn], own)] if lists else []),
        _allow(
            "CommitS3Tables",
            [
                "s3tables:GetTableMetadataLocation",
                "s3tables:GetTableData",
                "s3tables:PutTableData",
                "s3tables:UpdateTableMetadataLocation",
            ],
            [f"{bucket_arn}/table/*"],
            own,
        ),
    ]


def _msk_statements(spec: ConnectorSpec, names: JobPhysicalNames) -> list[dict]:
    statements = [
        # a connector file without bootstrap.servers: the job asks MSK for the cluster's brokers
        # (sink_engine/source/msk_brokers.py). The Service Authorization Reference gives kafka:GetBootstrapBrokers
        # no resource type ("Actions, resources, and condition keys for Amazon Managed Streaming for Apache Kafka",
        # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonmanagedstreamingforapachekafka.html):
        # it is granted on "*", and reads only connection strings
        *([_allow("GetClusterBrokers", ["kafka:GetBootstrapBrokers"], ["*"])] if spec.brokers_from_cluster else []),
        _allow("ConnectToCluster", ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"], [names.cluster_arn]),
        _allow(
            "ReadOwnTopics",
            ["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"],
            [names.msk_arn("topic", t) for t in spec.topics],
        ),
        _allow(
            "UseOwnConsumerGroup",
            ["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"],
            [names.msk_arn("group", spec.group_id)],
        ),
    ]
    if spec.dlq_topic:
        statements += [
            _allow(
                "WriteDeadLetterTopic",
                [
                    "kafka-cluster:CreateTopic",
                    "kafka-cluster:DescribeTopic",
                    "kafka-cluster:ReadData",
                    "kafka-cluster:WriteData",
                ],
                [names.msk_arn("topic", spec.dlq_topic)],
            ),
            _allow("WriteIdempotently", ["kafka-cluster:WriteDataIdempotently"], [names.cluster_arn]),
            _allow(
                "DeadLetterTransactions",
                ["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"],
                [names.msk_arn("transactional-id", f"sink-engine-dlq.{spec.name}.*")],
            ),
        ]
    return statements


def _allow(sid: str, actions: list[str], resources: list[str], condition: dict | None = None) -> dict:
    statement: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resources}
    if condition:
        statement["Condition"] = condition
    return statement
