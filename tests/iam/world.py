"""The IAM-enforcing moto world: an admin user made with the server's free requests, and per deployed role an
IAM role whose inline policies are the moto copies of that role's documents, assumed with sts:AssumeRole.

moto evaluates an assumed role's inline policies as it evaluates a user's; a role keeps the deployed shape (the
caller is `assumed-role/<name>/<session>`, as on AWS).
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.request
from dataclasses import dataclass

import boto3

from tests.iam.moto_policy import Relaxation, for_moto
from tests.iam.physical import MOTO_ACCOUNT
from tests.iam.policies import PolicyDocument

# create_user, put_user_policy, create_access_key: the requests LocalStack(iam_free_requests=...) must leave free
ADMIN_REQUESTS = 3
ADMIN = "iam-test-admin"
SESSION = "iam-test"  # the session name of every assumed role (the caller is assumed-role/<role>/<SESSION>)
# moto checks a trust policy's principal literally (an account root does not cover the admin user)
_TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:aws:iam::{MOTO_ACCOUNT}:user/{ADMIN}"},
            "Action": "sts:AssumeRole",
        }
    ],
}


@dataclass(frozen=True)
class Credentials:
    access_key_id: str
    secret_access_key: str
    session_token: str | None
    endpoint: str
    region: str

    @property
    def env(self) -> dict[str, str]:
        """The variables boto3 reads (in this process, a Lambda handler or a Spark worker)."""
        env = {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
        }
        if self.session_token:
            env["AWS_SESSION_TOKEN"] = self.session_token
        return env

    def client(self, service: str):
        client = boto3.session.Session(
            self.access_key_id, self.secret_access_key, self.session_token, self.region
        ).client(service, endpoint_url=self.endpoint)
        client.meta.events.register("before-sign.emr-serverless", sign_payload_hash)
        return client


@dataclass(frozen=True)
class Principal:
    name: str  # the role's name in moto: the physical name of the template's role
    arn: str
    documents: tuple[PolicyDocument, ...]  # as deployed (ARNs in moto's account)
    relaxations: tuple[Relaxation, ...]  # what the moto copies relax
    credentials: Credentials


class IamWorld:
    def __init__(self, endpoint: str, region: str):
        """Make the admin with the server's first ADMIN_REQUESTS requests (call once, first, per server)."""
        self.endpoint, self.region = endpoint, region
        iam = Credentials("bootstrap", "bootstrap", None, endpoint, region).client("iam")
        iam.create_user(UserName=ADMIN)
        iam.put_user_policy(
            UserName=ADMIN,
            PolicyName="admin",
            PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
            ),
        )
        key = iam.create_access_key(UserName=ADMIN)["AccessKey"]
        self.admin = Credentials(key["AccessKeyId"], key["SecretAccessKey"], None, endpoint, region)

    def models(self, service: str) -> dict:
        """moto's stored state of `service` (its moto module name, e.g. "emrserverless"), read through moto's own
        API, which authorizes nothing and, in tests/iam/emr_lifecycle.py's moto, is no look. Once the moto has
        served a multipart upload moto's own answers 500; devtools/moto_server.py's does not (docs/aws-fidelity.md)."""
        with urllib.request.urlopen(f"{self.endpoint}/moto-api/data.json", timeout=30) as response:
            return json.load(response)[service]

    def role(self, name: str, documents: list[PolicyDocument]) -> Principal:
        """Create role `name` with the moto copies of `documents` and assume it."""
        iam = self.admin.client("iam")
        arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(_TRUST))["Role"]["Arn"]
        relaxations = []
        for index, policy in enumerate(documents):
            copy, relaxed = for_moto(policy)
            relaxations += relaxed
            iam.put_role_policy(
                RoleName=name, PolicyName=_policy_name(index, policy.source), PolicyDocument=json.dumps(copy)
            )
        assumed = self.admin.client("sts").assume_role(RoleArn=arn, RoleSessionName=SESSION)["Credentials"]
        credentials = Credentials(
            assumed["AccessKeyId"], assumed["SecretAccessKey"], assumed["SessionToken"], self.endpoint, self.region
        )
        return Principal(name, arn, tuple(documents), tuple(relaxations), credentials)


def sign_payload_hash(request, **_) -> None:
    """botocore's `before-sign` hook: sign an EMR Serverless request's payload hash as the `X-Amz-Content-SHA256`
    header (the hash of its body; SigV4 lets a request sign any header). An IAM-enforcing moto recomputes the
    signature of a request without a body (GET ListJobRuns, GetApplication; POST StopApplication) over its headers
    sent as a form body, and refuses it; with the header signed, it takes the hash from the header, as SigV4 does."""
    body = request.body or b""
    body = body.encode() if isinstance(body, str) else body
    request.headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()


def _policy_name(index: int, source: str) -> str:
    return f"{index:02d}-" + re.sub(r"[^\w+=,.@-]", "-", source)[:120]
