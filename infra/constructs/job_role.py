"""The EMR job runtime role of one connector: what its runs may do, and nothing of another connector's."""

from __future__ import annotations

import zlib

from aws_cdk import Stack, Tags
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from infra.connectors import ConnectorSpec
from infra.constructs.nag import KMS_FAMILIES, KMS_REASON, acknowledge
from infra.iceberg import ANY_TABLE
from infra.job_policy import JobPhysicalNames, assumed_role_arn, job_statements
from sink_engine.target.iceberg_tables.settings import STAGED_FILES

ROLE_NAME_LIMIT = 64  # IAM's limit on a role name


def job_role_path(env: str) -> str:
    """The path of the named job roles of environment `env` (what the trigger may pass: `<path>*`)."""
    return f"/sink-jobs/{env}/"


def job_role_name(env: str, connector: str) -> str:
    """`sink-<env>-<connector>`, or when longer than IAM allows, its head and a hash of the whole (unique)."""
    name = f"sink-{env}-{connector}"
    if len(name) <= ROLE_NAME_LIMIT:
        return name
    return f"{name[: ROLE_NAME_LIMIT - 9]}-{zlib.crc32(name.encode()):08x}"


def job_role_arn(account: str, env: str, connector: str) -> str:
    """The named job role's ARN (connector `*`: the pattern of every named job role of `env`)."""
    return f"arn:aws:iam::{account}:role{job_role_path(env)}{job_role_name(env, connector)}"


class ConnectorJobRole(Construct):
    """Attribute: `role`, assumed by EMR Serverless (this account's applications only), tagged `connector`.

    Its policy is `infra.job_policy.job_statements` for `spec`, plus what every run needs: the data key
    (encrypt/decrypt), and what `SinkJob` adds (the job's two artifacts and its log group). `named`: the role
    gets `job_role_name` under `job_role_path` (its ARN known without a reference to its stack), else a name
    CloudFormation generates."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        spec: ConnectorSpec,
        names: JobPhysicalNames,
        data_key: kms.IKey,
        env: str,
        named: bool = False,
    ):
        super().__init__(scope, id)
        stack = Stack.of(self)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal(
                "emr-serverless.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{stack.partition}:emr-serverless:{stack.region}:{stack.account}:/applications/*"
                    },
                },
            ),
            description=f"Sink job runtime role of connector {spec.name} ({env})",
            role_name=job_role_name(env, spec.name) if named else None,
            path=job_role_path(env) if named else None,
        )
        Tags.of(self.role).add("connector", spec.name)
        for statement in job_statements(spec, names):
            self.role.add_to_policy(iam.PolicyStatement.from_json(statement))
        data_key.grant_encrypt_decrypt(self.role)
        for finding in KMS_FAMILIES:
            acknowledge(self.role, f"IAM5[{finding}]", KMS_REASON)
        bucket = f"arn:aws:s3:::{names.bucket_name}"
        # with an assumed role, the S3 client's objects are granted by that role's policy (job_policy.py)
        for prefix in (*spec.data_prefixes(), f"{names.dlq_prefix}{spec.name}/") if not assumed_role_arn(spec) else ():
            acknowledge(
                self.role,
                f"IAM5[Resource::{bucket}/{prefix}*]",
                "The job writes objects whose keys (partitions, offsets) are known only at run time, under "
                "this connector's own prefixes.",
            )
        if spec.iceberg and spec.iceberg.table_bucket_arn:
            acknowledge(
                self.role,
                f"IAM5[Resource::{spec.iceberg.table_bucket_arn}/table/*]",
                "The tables of the stack's S3 table bucket: a table's ARN ends in an id S3 Tables assigns "
                "when the table is created, so no ARN can name one table by its name.",
            )
        if spec.iceberg and not spec.iceberg.table_bucket_arn:
            for database, table in spec.iceberg.tables:
                prefix = spec.iceberg.table_prefix(database, table)
                acknowledge(
                    self.role,
                    f"IAM5[Resource::{bucket}/{prefix}*]",
                    "The data and metadata files of this connector's own Iceberg table, named by pyiceberg at "
                    "run time, under the table's location"
                    + ("" if table != ANY_TABLE else " (fan-out: any table of a database the connector declares)")
                    + ".",
                )
                if table == ANY_TABLE:
                    glue = f"arn:aws:glue:{names.region}:{names.account}"
                    acknowledge(
                        self.role,
                        f"IAM5[Resource::{glue}:table/{database}/*]",
                        "Fan-out by field: the tables its records name at run time, in a database the connector "
                        "declares (iceberg.tables.route-namespaces); the engine refuses a record naming another.",
                    )
                if spec.continuous:
                    acknowledge(
                        self.role,
                        f"IAM5[Resource::{bucket}/{prefix}{STAGED_FILES}*]",
                        "The manifests and keys files this continuous connector's tasks stage for its driver, "
                        "each named with a random id at run time; the driver deletes them once committed.",
                    )
        acknowledge(
            self.role,
            f"IAM5[Resource::{names.msk_arn('transactional-id', f'sink-engine-dlq.{spec.name}.*')}]",
            "One transactional id per source topic-partition of this connector's dead letters.",
        )
        for target in (t for t in spec.restore_targets if t.endswith("*")):
            acknowledge(
                self.role,
                f"IAM5[Resource::{names.msk_arn('topic', target)}]",
                "The restore target topics the environment's settings allow this connector "
                "(restore.connectors.<name>.target_topics), a prefix of topic names.",
            )
        acknowledge(
            self.role,
            "IAM5[Resource::*]",
            "cloudwatch:PutMetricData, limited to the SinkEngine namespace "
            "by cloudwatch:namespace; glue:GetSchemaVersion, which looks a schema up by its version id, "
            "which no registry or schema ARN can scope (only with the Glue Schema Registry converter); "
            "lakeformation:GetDataLakeSettings, a read of the account's settings with no resource types "
            "(only for Iceberg tables in Glue: the doctor's Lake Formation check); kafka:GetBootstrapBrokers, "
            "which has no resource types (only for a connector file without bootstrap.servers: the cluster's "
            "brokers).",
        )
        acknowledge(
            self.role,
            f"IAM5[Resource::arn:aws:kms:{names.region}:{names.account}:key/*]",
            "A connector's own SSE-KMS key named by alias, scoped with kms:ResourceAliases.",
        )
