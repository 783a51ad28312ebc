"""An IcebergFormat connector file for the dev environment, made from the shipped dev connector, and the dev
stacks synthesized with it (tests/infra, tests/deployed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from infra.job_policy import JobPhysicalNames
from infra.settings import ENVIRONMENTS_DIR, load_settings, parse_settings

ENV = "dev"
NAME = "orders-iceberg"
DATABASE = "lake"
DEV = load_settings(ENV)
# a second connector's overrides: one table, in namespace `audit`, not auto-created
AUDIT_TABLE = {"topics": "orders", "iceberg.tables": "audit.events", "iceberg.tables.auto-create-enabled": None}
# fan-out by field (Debezium's `__source_table`) with its declared namespaces: bare names in `inventory`, and `sales`
FAN_OUT = {
    "iceberg.tables": None,
    "iceberg.tables.dynamic-enabled": "true",
    "iceberg.tables.route-field": "__source_table",
    "iceberg.tables.default-namespace": "inventory",
    "iceberg.tables.route-namespaces": "sales",
}
# the physical names a job role's statements are built with, for policy checks without a synthesis
# dev's connector and two Iceberg ones (a data run of 5 vCPUs and a table upkeep run of 2 each) may need 23 vCPUs at
# once, past the 16 dev states (infra/quotas.py): the stacks of settings_with state an account raised to 32
ACCOUNT_VCPU_QUOTA = 32
NAMES = JobPhysicalNames(
    DEV.bucket_name,
    "arn:aws:dynamodb:eu-west-1:111111111111:table/offsets",
    DEV.msk.cluster_arn,
    DEV.retention.dlq_prefix,
    DEV.region,
    DEV.account,
)


def settings_with(**iceberg):
    """dev.json's settings with these `iceberg` settings changed, on an account of ACCOUNT_VCPU_QUOTA vCPUs."""
    document = json.loads((ENVIRONMENTS_DIR / f"{ENV}.json").read_text())
    document["iceberg"].update(iceberg)
    document["emr"]["account_vcpu_quota"] = ACCOUNT_VCPU_QUOTA
    return parse_settings(ENV, document, f"{ENV}.json")


def iceberg_document(name: str = NAME, **config) -> dict:
    """The shipped dev connector as an Iceberg connector `name`: a Glue table per topic in DATABASE, auto-created,
    dead letters under its own folder; `config` overrides keys (None removes one)."""
    document = json.loads((DEV.connectors_dir / "orders.json").read_text())
    merged = {
        **document["config"],
        "format.class": "IcebergFormat",
        "iceberg.tables": f"{DATABASE}.${{topic}}",
        "iceberg.catalog.type": "glue",
        "iceberg.tables.auto-create-enabled": "true",
        "errors.deadletterqueue.s3.prefix": f"{DEV.retention.dlq_prefix}{name}",
        **config,
    }
    return {"name": name, "config": {k: v for k, v in merged.items() if v is not None}}


def load_spec(folder: Path, document: dict, settings=None):
    """The ConnectorSpec of `document` as synthesis loads a connector file (validated against `settings`)."""
    from infra.connectors import _load

    settings = settings or DEV
    path = folder / f"{document['name']}.json"
    path.write_text(json.dumps(document))
    return _load(path, settings)


def synthesize_with(outdir: Path, documents: list[dict], settings=None):
    """`cdk synth` of the dev environment for its shipped connectors and `documents` (with `settings` instead of
    dev.json's when given): (deployment, {"data" | "service": template})."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from infra.application import build, new_app
    from infra.connectors import load_connectors
    from tests.infra.conftest import ensure_artifacts

    ensure_artifacts()
    settings = settings or DEV
    outdir.mkdir(parents=True, exist_ok=True)
    connectors = load_connectors(settings) + tuple(load_spec(outdir, d, settings) for d in documents)
    app = new_app(str(outdir / "cdk.out"))
    deployment = build(app, ENV, connectors=connectors, settings=settings)
    app.synth()
    templates = {
        which: json.loads((outdir / "cdk.out" / f"{stack.stack_name}.template.json").read_text())
        for which, stack in (("data", deployment.data), ("service", deployment.service))
    }
    return deployment, templates


def resources(template: dict, kind: str) -> dict[str, dict]:
    """A synthesized template's resources of one CloudFormation type, by logical id."""
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}
