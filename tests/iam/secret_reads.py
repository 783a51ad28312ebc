"""Secrets Manager's and SSM Parameter Store's resource checks, which moto does not make (docs/aws-fidelity.md):
moto authorizes every service but S3 with the resource `*` (moto_policy.py), so a role that may read one secret
or parameter reads them all.

Inside `acting_as(principal)`, `aws_checks_secret_reads(principal, facts)` makes the boto3 clients created in its
body (this process's default session: the engine resolves references on its driver, a Lambda in its handler)
evaluate each GetSecretValue and GetParameter as AWS does before sending it: the principal's documents as deployed,
against the secret's or parameter's ARN (`actions.py`; a secret's from `facts.secret_arns`). A read they do not
allow fails as on AWS (HTTP 400 AccessDeniedException, AWS's message); an allowed one goes to moto, which still
checks the action.
"""

from __future__ import annotations

from contextlib import contextmanager

import boto3
from botocore.exceptions import ClientError

from tests.iam.actions import Facts, needs
from tests.iam.evaluate import allows
from tests.iam.recorder import Call
from tests.iam.world import SESSION, Principal

# event service id -> (botocore service name, operation, how AWS's refusal names the resource: the id as written
# for Secrets Manager, the parameter's ARN for SSM)
READS = {
    "secrets-manager": ("secretsmanager", "GetSecretValue", lambda params, need: params["SecretId"]),
    "ssm": ("ssm", "GetParameter", lambda params, need: need.resource),
}


@contextmanager
def aws_checks_secret_reads(principal: Principal, facts: Facts):
    caller = f"arn:aws:sts::{facts.account}:assumed-role/{principal.name}/{SESSION}"

    def checker(service: str, operation: str, named):
        def check(params, context=None, **_):
            call = Call(principal.name, service, operation, (context or {}).get("client_region") or "", dict(params))
            for need in needs(call, facts):
                if not allows(principal.documents, need):
                    message = (
                        f"User: {caller} is not authorized to perform: {need.action} on resource: "
                        f"{named(params, need)} because no identity-based policy allows the {need.action} "
                        "action"
                    )
                    raise ClientError(
                        {
                            "Error": {"Code": "AccessDeniedException", "Message": message},
                            "ResponseMetadata": {"HTTPStatusCode": 400},
                        },
                        operation,
                    )

        return check

    registered = []
    for event_service, (service, operation, named) in READS.items():
        event, unique_id = (
            f"before-parameter-build.{event_service}.{operation}",
            f"aws-checks-secret-reads:{principal.name}:{service}",
        )
        boto3.DEFAULT_SESSION.events.register(event, checker(service, operation, named), unique_id=unique_id)
        registered.append((event, unique_id))
    try:
        yield
    finally:
        for event, unique_id in registered:
            boto3.DEFAULT_SESSION.events.unregister(event, unique_id=unique_id)
