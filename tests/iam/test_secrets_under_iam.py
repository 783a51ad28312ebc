"""`${secrets:...}` and `${ssm:...}` references under enforced IAM: a connector whose file references a Secrets
Manager secret and an SSM Parameter Store SecureString, synthesized for the dev environment, runs as its own job
role and resolves both with exactly the grants the stack gives it (`ReadOwnSecrets`: the name as `<name>-??????`;
`ReadOwnParameters`: the parameter's ARN), and so does the DLQ replay Lambda as its role; a secret or parameter the
file does not reference is refused, and the engine names the config key it was resolving.

moto does not check which secret or parameter a role reads (docs/aws-fidelity.md):
`secret_reads.aws_checks_secret_reads` checks each read as AWS does, and tests here show that moto alone lets the
reads through."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import boto3
import pytest

from tests.iam.acting import acting_as
from tests.iam.actions import Facts, needs
from tests.iam.deployment import (
    KEY_REGISTRY_LOGIN_KEY,
    REGISTRY_LOGIN_KEY,
    SECRETS_CONNECTOR,
    Deployed,
    secrets_connector_document,
    synthesize,
)
from tests.iam.engine import run_cli
from tests.iam.evaluate import allows
from tests.iam.functions import HANDLERS, LambdaContext, as_function
from tests.iam.recorder import Call
from tests.iam.secret_reads import aws_checks_secret_reads
from tests.iam.template import connector_role, custom_resource_property, function_role
from tests.iam.world import Principal

REFERENCED, UNREFERENCED = "sink-dev/orders-registry", "sink-dev/payments-registry"
PASSWORDS = {REFERENCED: "orders-registry-password", UNREFERENCED: "payments-registry-password"}
# SecureString parameters (the AWS managed key aws/ssm)
PARAMETER, OTHER_PARAMETER = "/sink-dev/orders/key-registry-password", "/sink-dev/payments/key-registry-password"
PARAMETERS = {PARAMETER: "orders-key-registry-password", OTHER_PARAMETER: "payments-key-registry-password"}


@dataclass(frozen=True)
class SecretsDeployment:
    deployed: Deployed
    job: Principal
    replay: Principal
    facts: Facts  # with the ARNs moto gave the secrets
    config_uri: str
    published: dict[str, bytes]  # what the admin publishes for this deployment: its config and its connector index


@pytest.fixture(scope="module")
def secrets(iam_stack, world, engine_run, tmp_path_factory) -> SecretsDeployment:
    """Both secrets and both parameters, created by the admin; the connector referencing REFERENCED and PARAMETER
    deployed next to the suite's one
    (the suite's has run: the topics hold records): its published config, its job role and its DLQ replay role
    (under a name of its own: the suite's replay role has the same logical id). Its config is removed afterwards."""
    from infra.constructs.admin import RESOURCE_TYPE
    from lambdas.admin.desired import DesiredState

    manager = world.admin.client("secretsmanager")
    arns = {
        name: manager.create_secret(Name=name, SecretString=json.dumps({"password": password}))["ARN"]
        for name, password in PASSWORDS.items()
    }
    ssm = world.admin.client("ssm")
    for name, password in PARAMETERS.items():
        ssm.put_parameter(Name=name, Value=password, Type="SecureString", Overwrite=True)
    synthesized = synthesize(
        secrets_connector_document(iam_stack.bootstrap_servers, REFERENCED, PARAMETER),
        tmp_path_factory.mktemp("iam-secrets"),
    )
    mine = Deployed.of(synthesized, {})
    template = synthesized.templates["service"]
    desired = DesiredState.from_json(
        mine.in_moto(custom_resource_property(template, RESOURCE_TYPE, "State", mine.physical["service"]))
    )
    (connector,) = desired.connectors
    published = desired.published_objects()
    s3 = world.admin.client("s3")
    s3.put_object(Bucket=desired.bucket, Key=connector.config_key, Body=published[connector.config_key])
    job_id, replay_id = connector_role(template, SECRETS_CONNECTOR), function_role(template, HANDLERS["replay"])
    job = world.role(mine.role_name(job_id), mine.documents(job_id))
    replay = world.role(f"{mine.role_name(replay_id)[:56]}-secrets", mine.documents(replay_id))
    yield SecretsDeployment(
        mine,
        job,
        replay,
        dataclasses.replace(mine.facts(), secret_arns=arns),
        f"s3://{desired.bucket}/{connector.config_key}",
        published,
    )
    s3.delete_object(Bucket=desired.bucket, Key=connector.config_key)


def _secret_reads(call_log, principal: Principal) -> list[str]:
    return [
        c.params["SecretId"]
        for c in call_log.calls()
        if c.principal == principal.name and c.operation == "GetSecretValue"
    ]


def _parameter_reads(call_log, principal: Principal) -> list[str]:
    return [
        c.params["Name"] for c in call_log.calls() if c.principal == principal.name and c.operation == "GetParameter"
    ]


def _parameter_arn(secrets: SecretsDeployment, name: str) -> str:
    return f"arn:aws:ssm:{secrets.deployed.synthesized.settings.region}:{secrets.facts.account}:parameter{name}"


def test_a_run_as_the_job_role_resolves_its_secret_and_parameter_with_the_stacks_grants(secrets, call_log, spark):
    from sink_engine.validation import load_checked_config

    # given the job role's documents as synthesized: GetSecretValue on the referenced secret's name-?????? only,
    # GetParameter on the referenced parameter's ARN only
    (granted,) = [
        s["Resource"] for d in secrets.job.documents for s in d.statements if s.get("Sid") == "ReadOwnSecrets"
    ]
    assert granted == secrets.facts.secret_arns[REFERENCED][:-6] + "??????"  # one resource: a string, not a list
    (parameters,) = [
        (s["Action"], s["Resource"])
        for d in secrets.job.documents
        for s in d.statements
        if s.get("Sid") == "ReadOwnParameters"
    ]
    assert parameters == ("ssm:GetParameter", _parameter_arn(secrets, PARAMETER))
    # when the connector runs as that role, and loads its config as the run does
    with acting_as(secrets.job, call_log, spark), aws_checks_secret_reads(secrets.job, secrets.facts):
        run = run_cli("run", "--config", secrets.config_uri)
        config = load_checked_config(secrets.config_uri)
    # then the run succeeds, having read the secret, and the reference resolves to the secret's field
    assert run.code == 0, run.err
    assert set(_secret_reads(call_log, secrets.job)) == {REFERENCED}
    assert set(_parameter_reads(call_log, secrets.job)) == {PARAMETER}
    assert config[REGISTRY_LOGIN_KEY] == f"orders-sink:{PASSWORDS[REFERENCED]}"
    assert config[KEY_REGISTRY_LOGIN_KEY] == f"orders-sink:{PARAMETERS[PARAMETER]}"  # decrypted


def test_moto_alone_lets_the_job_role_read_a_secret_its_file_does_not_reference(secrets):
    # AWS evaluates the read against the secret's ARN, which the role's documents do not name
    call = Call(secrets.job.name, "secretsmanager", "GetSecretValue", "", {"SecretId": UNREFERENCED})
    assert [allows(secrets.job.documents, n) for n in needs(call, secrets.facts)] == [False]
    # moto checks the action only: the read succeeds (when it no longer does, secret_reads.py can go)
    with acting_as(secrets.job):
        answer = boto3.client("secretsmanager").get_secret_value(SecretId=UNREFERENCED)
    assert json.loads(answer["SecretString"]) == {"password": PASSWORDS[UNREFERENCED]}


def test_moto_alone_lets_the_job_role_read_a_parameter_its_file_does_not_reference(secrets):
    # AWS evaluates the read against the parameter's ARN, which the role's documents do not name
    region = secrets.deployed.synthesized.settings.region
    call = Call(secrets.job.name, "ssm", "GetParameter", region, {"Name": OTHER_PARAMETER})
    assert [allows(secrets.job.documents, n) for n in needs(call, secrets.facts)] == [False]
    # moto checks the action only: the read succeeds (when it no longer does, secret_reads.py's SSM check can go)
    with acting_as(secrets.job):
        answer = boto3.client("ssm").get_parameter(Name=OTHER_PARAMETER, WithDecryption=True)
    assert answer["Parameter"]["Value"] == PARAMETERS[OTHER_PARAMETER]


# the key edited, its reference to what the deployed file does not name, what the error says, and the action
# and resource AWS refuses
REFUSED = [
    (
        REGISTRY_LOGIN_KEY,
        f"${{secrets:{UNREFERENCED}:password}}",
        f"cannot read secret '{UNREFERENCED}' from AWS Secrets Manager: AccessDeniedException",
        lambda secrets: f"secretsmanager:GetSecretValue on resource: {UNREFERENCED}",
    ),
    (
        KEY_REGISTRY_LOGIN_KEY,
        f"${{ssm:{OTHER_PARAMETER}}}",
        f"cannot read parameter '{OTHER_PARAMETER}' from AWS Systems Manager Parameter Store: AccessDeniedException",
        lambda secrets: f"ssm:GetParameter on resource: {_parameter_arn(secrets, OTHER_PARAMETER)}",
    ),
]


@pytest.mark.parametrize("key, reference, refused, action", REFUSED, ids=["secret", "parameter"])
def test_the_job_role_is_refused_what_its_file_does_not_reference_naming_the_key(
    secrets, spark, tmp_path, key, reference, refused, action
):
    # given the published config edited to reference a secret or parameter the deployed file does not (a grant
    # is synthesized from the file: the edit is not deployed)
    document = json.loads(secrets.published[secrets.config_uri.split("/", 3)[3]])
    document["config"][key] = f"orders-sink:{reference}"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    # when the connector runs with it as its job role
    with acting_as(secrets.job, spark=spark), aws_checks_secret_reads(secrets.job, secrets.facts):
        result = run_cli("run", "--config", str(edited))
    # then the read is refused, and the run fails before it reads a record, naming the key, what it references
    # and the action refused
    assert result.code == 1, result.out
    assert f"config key '{key}': {refused}" in result.err, result.err
    assert action(secrets) in result.err, result.err


def test_the_dlq_replay_resolves_the_connectors_secret_and_parameter_as_its_role(secrets, world, call_log):
    # given the deployment's connector index published (the suite's is put back after)
    bucket, index_key = secrets.config_uri.removeprefix("s3://").split("/")[0], _index_key(secrets)
    s3 = world.admin.client("s3")
    before = s3.get_object(Bucket=bucket, Key=index_key)["Body"].read()
    s3.put_object(Bucket=bucket, Key=index_key, Body=secrets.published[index_key])
    # when an operator asks the replay Lambda for a dry run of the connector's dead letters
    try:
        with (
            as_function(secrets.deployed, secrets.replay, HANDLERS["replay"], call_log) as handler,
            aws_checks_secret_reads(secrets.replay, secrets.facts),
        ):
            answer = handler({"connector": SECRETS_CONNECTOR, "dry_run": True}, LambdaContext())
    finally:
        s3.put_object(Bucket=bucket, Key=index_key, Body=before)
    # then it loaded the connector's config, resolving its secret and parameter as the replay role
    assert answer.get("connector") == SECRETS_CONNECTOR and answer["dry_run"] is True, answer
    assert _secret_reads(call_log, secrets.replay) == [REFERENCED]
    assert _parameter_reads(call_log, secrets.replay) == [PARAMETER]


def _index_key(secrets: SecretsDeployment) -> str:
    (key,) = [k for k in secrets.published if k != secrets.config_uri.split("/", 3)[3]]
    return key
