"""Build the CDK app of one environment: its stacks, with cdk-nag's AwsSolutions checks attached."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Annotations, App, Environment, Tags, Validations
from cdk_nag import AwsSolutionsChecks

from infra.connectors import ConnectorSpec, ignored_key_warnings, load_connectors
from infra.errors import TemplateSizeError
from infra.settings import Settings, load_settings
from infra.stacks.data import DataStack
from infra.stacks.service import ServiceStack

# Feature flags the stacks rely on, set here so `cdk synth` and the tests build the same templates.
FEATURE_FLAGS = {
    "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True,
    "@aws-cdk/aws-iam:minimizePolicies": True,
    "@aws-cdk/core:target-partitions": ["aws"],
    # the service stack imports the data stack's bucket, table and keys: keep CloudFormation exports (strong
    # references, aws-cdk-lib's default) so that the data stack cannot drop what the service stack uses; said
    # explicitly, as aws-cdk-lib 2.275 asks (without it every synth warns)
    "@aws-cdk/core:defaultCrossStackReferences": "strong",
}


# CloudFormation's limit on a template read from S3 (1 MB), where `cdk deploy` puts templates over 50 KB
TEMPLATE_LIMIT_BYTES = 1024 * 1024
# what one connector adds to the template file of the stack holding it (its job role, alarms, index entry, and per
# topic an event source mapping and maybe a Glue table): measured with copies of dev's connector of two topics
# (1 connector 80,027 bytes, 30 connectors 579,605: about 17.2 KB each, 56 connectors in the service stack); of
# ten topics with a table each, about 38 KB and 24 resources (tests/infra/test_infra_scale.py)
CONNECTOR_TEMPLATE_BYTES = 17_200


def new_app(outdir: str | None = None) -> App:
    """A CDK app with FEATURE_FLAGS (context passed on the command line still wins)."""
    return App(outdir=outdir, context=dict(FEATURE_FLAGS)) if outdir else App(context=dict(FEATURE_FLAGS))


@dataclass(frozen=True)
class Deployment:
    settings: Settings
    connectors: tuple[ConnectorSpec, ...]
    data: DataStack
    service: ServiceStack


def build(
    app: App, env: str | None, connectors: tuple[ConnectorSpec, ...] | None = None, settings: Settings | None = None
) -> Deployment:
    """Add the stacks of environment `env` to `app`, for `connectors` (default: the environment's connector files)
    and `settings` (default: the environment's file); raises SettingsError / ConnectorSpecError naming the fault."""
    settings = settings or load_settings(env)
    connectors = load_connectors(settings) if connectors is None else connectors
    where = Environment(account=settings.account, region=settings.region)
    data = DataStack(
        app,
        f"Sink-{settings.env}-Data",
        settings=settings,
        env=where,
        topics_dirs=tuple(sorted({c.topics_dir for c in connectors if not c.iceberg})),
        iceberg_databases=tuple(
            sorted({d for c in connectors if c.iceberg and not c.iceberg.table_bucket_arn for d in c.iceberg.databases})
        ),
        s3_tables_namespaces=tuple(
            sorted({d for c in connectors if c.iceberg and c.iceberg.table_bucket_arn for d in c.iceberg.databases})
        ),
        description=f"Kafka-to-S3 sink ({settings.env}): data lake bucket and offsets table",
    )
    service = ServiceStack(
        app,
        f"Sink-{settings.env}-Service",
        settings=settings,
        connectors=connectors,
        data=data,
        env=where,
        description=f"Kafka-to-S3 sink ({settings.env}): EMR Serverless job, trigger, admin, DLQ replay, alarms",
    )
    service.add_stack_dependency(data)
    for warning in ignored_key_warnings(connectors):  # `cdk synth` prints them; the settings can refuse instead
        Annotations.of(service).add_warning(warning)
    for stack in (data, service):
        Tags.of(stack).add("project", "kafka-s3-sink")
        Tags.of(stack).add("environment", settings.env)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, write_suppressions_to_cloud_formation=True))
    return Deployment(settings, connectors, data, service)


def check_template_sizes(assembly_dir: str | Path, limit: int = TEMPLATE_LIMIT_BYTES) -> None:
    """TemplateSizeError naming a stack of the synthesized cloud assembly, nested stacks included, whose template
    CloudFormation would refuse for its size (cdk synth itself checks the 500 resources per stack, not the size)."""
    for template in sorted(Path(assembly_dir).glob("*.template.json")):
        size = template.stat().st_size
        if size > limit:
            stack = template.name.removesuffix(".template.json")
            raise TemplateSizeError(
                f"stack {stack}: its template is {size:,} bytes, over CloudFormation's {limit:,}; each connector "
                f"adds about {CONNECTOR_TEMPLATE_BYTES:,} bytes (two topics) to the stack holding it: set or raise "
                'the setting connector_stacks (nested stacks holding the connectors, infra/README.md "Many '
                'connectors")'
            )
