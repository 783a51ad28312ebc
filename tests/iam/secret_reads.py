"""Secrets Manager's resource check, which moto does not make (docs/aws-fidelity.md): moto authorizes every
service but S3 with the resource `*` (moto_policy.py), so a role that may read one secret reads them all.

Inside `acting_as(principal)`, `aws_checks_secret_reads(principal, facts)` makes the boto3 clients created in its
body (this process's default session: the engine resolves references on its driver, a Lambda in its handler)
evaluate each GetSecretValue as AWS does before sending it: the principal's documents as deployed, against the
secret's ARN (`actions.py`, from `facts.secret_arns`). A read they do not allow fails as on AWS (HTTP 400
AccessDeniedException, AWS's message); an allowed one goes to moto, which still checks the action.
"""
from __future__ import annotations

from contextlib import contextmanager

import boto3
from botocore.exceptions import ClientError

from tests.iam.actions import Facts, needs
from tests.iam.evaluate import allows
from tests.iam.recorder import Call
from tests.iam.world import SESSION, Principal

EVENT = "before-parameter-build.secrets-manager.GetSecretValue"


@contextmanager
def aws_checks_secret_reads(principal: Principal, facts: Facts):
    caller = f"arn:aws:sts::{facts.account}:assumed-role/{principal.name}/{SESSION}"

    def check(params, context=None, **_):
        call = Call(principal.name, "secretsmanager", "GetSecretValue", (context or {}).get("client_region") or "",
                    dict(params))
        for need in needs(call, facts):
            if not allows(principal.documents, need):
                message = (f"User: {caller} is not authorized to perform: {need.action} on resource: "
                           f"{params['SecretId']} because no identity-based policy allows the {need.action} action")
                raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": message},
                                   "ResponseMetadata": {"HTTPStatusCode": 400}}, "GetSecretValue")

    unique_id = f"aws-checks-secret-reads:{principal.name}"
    boto3.DEFAULT_SESSION.events.register(EVENT, check, unique_id=unique_id)
    try:
        yield
    finally:
        boto3.DEFAULT_SESSION.events.unregister(EVENT, unique_id=unique_id)
