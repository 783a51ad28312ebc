"""The deployment under test: the `dev` environment's stacks synthesized for one connector, and the resources its
roles name created in the IAM-enforcing moto under the same names (bucket, offsets table, EMR application).

The connector is the shipped `infra/connectors/dev/orders.json` reading the local broker (plaintext: its MSK IAM
client settings removed) with the features the tests exercise: object tags, a scheduled rotation (plans recorded
in DynamoDB and deleted with BatchWriteItem) and dead letters under its own S3 prefix. It is synthesized, not
just run, so that a policy that depends on the connector's settings is the one the tests run under.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from infra.settings import Settings, load_settings
from tests.iam.actions import Facts
from tests.iam.intrinsics import Physical
from tests.iam.physical import MOTO_ACCOUNT, stack_exports, stack_physical, to_moto_account
from tests.iam.policies import PolicyDocument, role_documents
from tests.iam.template import bucket_kms_keys, function_environment, table_partition_keys

ENV = "dev"
SHIPPED_CONNECTOR = Path(__file__).resolve().parents[2] / "infra" / "connectors" / ENV / "orders.json"
TEST_SETTINGS = {
    "flush.size": "1000",
    "tasks.max": "2",
    "s3.object.tagging": "true",
    "rotate.schedule.interval.ms": "600000",
    "errors.tolerance": "all",
    "sink.kafka.timeout.ms": "20000",
}


def connector_document(bootstrap_servers: str) -> dict:
    """The shipped connector as the tests deploy it (see the module docstring); its dead letters go to its own
    folder under the environment's `retention.dlq_prefix`, as synthesis requires."""
    document = json.loads(SHIPPED_CONNECTOR.read_text())
    config = {k: v for k, v in document["config"].items() if not k.startswith("consumer.override.")}
    dlq = f"{load_settings(ENV).retention.dlq_prefix}{document['name']}"
    return {
        "name": document["name"],
        "config": {
            **config,
            **TEST_SETTINGS,
            "bootstrap.servers": bootstrap_servers,
            "errors.deadletterqueue.s3.prefix": dlq,
        },
    }


ICEBERG_CONNECTOR = "orders-iceberg"
ICEBERG_DATABASE = "lake"


def iceberg_connector_document(bootstrap_servers: str) -> dict:
    """The deployed connector of `connector_document` turned into an IcebergFormat connector of its own name: a
    Glue table per topic in database ICEBERG_DATABASE (auto-created, evolving), dead letters in its own folder."""
    document = connector_document(bootstrap_servers)
    config = {k: v for k, v in document["config"].items() if k not in ("s3.object.tagging", "topics.dir")}
    dlq = f"{load_settings(ENV).retention.dlq_prefix}{ICEBERG_CONNECTOR}"
    return {
        "name": ICEBERG_CONNECTOR,
        "config": {
            **config,
            "format.class": "IcebergFormat",
            "iceberg.tables": f"{ICEBERG_DATABASE}.${{topic}}",
            "iceberg.catalog.type": "glue",
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.tables.evolve-schema-enabled": "true",
            "errors.deadletterqueue.s3.prefix": dlq,
        },
    }


SECRETS_CONNECTOR = "orders-secrets"
REGISTRY_LOGIN_KEY = "value.converter.basic.auth.user.info"
KEY_REGISTRY_LOGIN_KEY = "key.converter.basic.auth.user.info"


def secrets_connector_document(bootstrap_servers: str, secret: str, parameter: str) -> dict:
    """The deployed connector of `connector_document` under its own name and data prefix, whose Schema Registry
    logins (credentials: a deployed file must reference them) are `orders-sink:` and the field `password` of Secrets
    Manager secret `secret` (value converter), and `orders-sink:` and the value of SSM parameter `parameter` (key
    converter). Its converters read no registry, so the values, resolved when a run starts, change nothing else in a
    run against the plaintext broker."""
    document = connector_document(bootstrap_servers)
    dlq = f"{load_settings(ENV).retention.dlq_prefix}{SECRETS_CONNECTOR}"
    return {
        "name": SECRETS_CONNECTOR,
        "config": {
            **document["config"],
            "topics.dir": SECRETS_CONNECTOR,
            "errors.deadletterqueue.s3.prefix": dlq,
            REGISTRY_LOGIN_KEY: f"orders-sink:${{secrets:{secret}:password}}",
            KEY_REGISTRY_LOGIN_KEY: f"orders-sink:${{ssm:{parameter}}}",
        },
    }


ASSUME_ROLE_CONNECTOR = "orders-assume"
WRITER_SESSION, WRITER_EXTERNAL_ID = "orders-assume-sink", "ext-orders-assume"


def assume_role_connector_document(
    bootstrap_servers: str, role_arn: str, external_id: str = WRITER_EXTERNAL_ID
) -> dict:
    """The deployed connector of `connector_document` under its own name, data prefix and dead-letter folder,
    whose S3 client assumes `role_arn` (AwsAssumeRoleCredentialsProvider, session WRITER_SESSION)."""
    document = connector_document(bootstrap_servers)
    dlq = f"{load_settings(ENV).retention.dlq_prefix}{ASSUME_ROLE_CONNECTOR}"
    return {
        "name": ASSUME_ROLE_CONNECTOR,
        "config": {
            **document["config"],
            "topics.dir": ASSUME_ROLE_CONNECTOR,
            "errors.deadletterqueue.s3.prefix": dlq,
            "s3.credentials.provider.class": "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
            "s3.credentials.provider.sts.role.arn": role_arn,
            "s3.credentials.provider.sts.role.session.name": WRITER_SESSION,
            "s3.credentials.provider.sts.role.external.id": external_id,
        },
    }


@dataclass(frozen=True)
class Synthesized:
    settings: Settings
    document: dict  # the connector file deployed
    stack_names: dict[str, str]  # "data" / "service" -> stack name
    templates: dict[str, dict]  # "data" / "service" -> template

    @property
    def connector(self) -> str:
        return self.document["name"]

    @property
    def dead_letter_prefix(self) -> str:
        return self.document["config"]["errors.deadletterqueue.s3.prefix"] + "/"


def synthesize(document: dict, outdir: Path, settings: Settings | None = None) -> Synthesized:
    """`cdk synth` of the dev environment (or of `settings`, dev's as changed by a test) for the one connector
    `document` (validated as a connector file is)."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from infra.application import build, new_app
    from infra.connectors import _load
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    settings = settings or load_settings(ENV)
    source = outdir / f"{document['name']}.json"
    source.write_text(json.dumps(document))
    app = new_app(str(outdir / "cdk.out"))
    deployment = build(app, ENV, connectors=(_load(source, settings),), settings=settings)
    app.synth()
    stacks = {"data": deployment.data.stack_name, "service": deployment.service.stack_name}
    templates = {
        which: json.loads((outdir / "cdk.out" / f"{name}.template.json").read_text()) for which, name in stacks.items()
    }
    return Synthesized(settings, document, stacks, templates)


@dataclass(frozen=True)
class Deployed:
    """The synthesized stacks with physical values: names as in moto, ARNs in the deployed account (moved to
    moto's only where documents and environments are read, through `to_moto_account`)."""

    synthesized: Synthesized
    physical: dict[str, Physical]  # "data" / "service"

    @classmethod
    def of(cls, synthesized: Synthesized, names: dict[str, str]) -> Deployed:
        settings, templates = synthesized.settings, synthesized.templates
        common = {"region": settings.region, "account": settings.account, "names": names}
        data = stack_physical(templates["data"], stack_name=synthesized.stack_names["data"], **common)
        service = stack_physical(
            templates["service"],
            stack_name=synthesized.stack_names["service"],
            exports=stack_exports(templates["data"], data),
            **common,
        )
        return cls(synthesized, {"data": data, "service": service})

    def in_moto(self, value):
        return to_moto_account(value, self.synthesized.settings.account)

    def role_name(self, role_id: str) -> str:
        return self.physical["service"].ref(role_id)

    def documents(self, role_id: str) -> list[PolicyDocument]:
        """The role's effective documents, ARNs in moto's account."""
        return [
            PolicyDocument(d.source, self.in_moto(d.document))
            for d in role_documents(self.synthesized.templates["service"], role_id, self.physical["service"])
        ]

    def environment(self, handler: str) -> dict[str, str]:
        return self.in_moto(
            function_environment(self.synthesized.templates["service"], handler, self.physical["service"])
        )

    def facts(self) -> Facts:
        data, physical = self.synthesized.templates["data"], self.physical["data"]
        return Facts(MOTO_ACCOUNT, table_partition_keys(data, physical), self.in_moto(bucket_kms_keys(data, physical)))
