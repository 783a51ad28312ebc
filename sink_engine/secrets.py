"""`${secrets:...}` and `${ssm:...}` references in a connector config, resolved from AWS Secrets Manager and AWS
Systems Manager Parameter Store when a run starts.

A reference stands for a stored value anywhere in a string value of the config, alone or inside text (a JAAS
config's `password="${secrets:msk/sink:password}"`):

- `${secrets:<secret-id>:<json-key>}`: the field `<json-key>` of the secret, whose SecretString is a JSON object
  (Confluent's `${secrets:<path>:<key>}` style); `${secrets:<secret-id>}`: the whole SecretString;
  `${aws:secretsmanager:<secret-id>[:<json-key>]}` says the same;
- `${ssm:<parameter>[:<json-key>]}` and `${aws:ssm:<parameter>[:<json-key>]}`: a Parameter Store parameter's value
  (GetParameter with decryption, so a SecureString reads as its plain text), or the field of a value that is a
  JSON object.

`<secret-id>` is a secret's name (no `:`) or its complete ARN (`arn:aws:secretsmanager:<region>:<account>:secret:
<name>-<6 characters>`). `<parameter>` is a parameter's name (`name` or `/path/name`; names hold no `:`, so the
first `:` after it starts the JSON key, and no version or label selector is taken) or its ARN
(`arn:aws:ssm:<region>:<account>:parameter/<name without its leading />`). An ARN is read in its own region, a name
in the run's. The job resolves references on the driver before Spark tasks get the config; `sink-engine validate`
and `cdk synth` only check their form. The deployed job role may read exactly the referenced secrets and
parameters (`Reference.arn_pattern`, infra/job_policy.py).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sink_engine.aws_types import SecretsClient
from sink_engine.errors import ConfigError, SinkError

REFERENCE = re.compile(r"\$\{(secrets|aws:secretsmanager|ssm|aws:ssm):([^}]*)\}")
_SECRET_NAME = re.compile(r"[A-Za-z0-9/_+=.@-]{1,512}")
# a parameter name: `name`, or fully qualified `/path/name` (a name with a `/` must start with one)
_PARAMETER_NAME = re.compile(r"(?:/[A-Za-z0-9_.-]+)+|[A-Za-z0-9_.-]+")
_PARAMETER_NAME_MAX = 1011
_RESERVED_PARAMETER = re.compile(r"/?(aws|ssm)", re.IGNORECASE)  # AWS's own (public, /aws/reference/...)


class SecretReadError(SinkError):
    """The store did not give a referenced secret or parameter (access denied, throttled, unreachable)."""


@dataclass(frozen=True)
class Source:
    """A store references read from: how a reference spells it, its boto3 service, the IAM action of a read,
    the number of `:`-parts of its ARNs, and the calls that check a name and read a value."""

    prefix: str  # as written in `${<prefix>:...}`
    title: str
    noun: str
    service: str
    iam_action: str
    arn_parts: int
    arn_form: str
    name_problem: Callable[[str], str | None]  # why a name is not one (None: it is)
    arn_name: Callable[[str], str | None]  # the name in an ARN's resource part (None: not this store's)
    arn_pattern: Callable[[str, str, str], str]  # (name, region, account) -> IAM resource of a name
    fetch: Callable[[Any, str], str | None]  # (client, name or ARN) -> the value (None: no text)
    not_found: frozenset[str]  # the error codes of a name that does not exist


def _secret_name_problem(name: str) -> str | None:
    return None if _SECRET_NAME.fullmatch(name) else "is not a secret name or ARN"


def _parameter_name_problem(name: str) -> str | None:
    if len(name) > _PARAMETER_NAME_MAX or not _PARAMETER_NAME.fullmatch(name):
        return "is not a parameter name (`name` or `/path/name` of letters, digits, _ . -) or ARN"
    if _RESERVED_PARAMETER.match(name):
        return (
            "names a parameter of AWS's own (names starting with aws or ssm are reserved); reference a Secrets "
            "Manager secret as ${secrets:...}"
        )
    return None


def _secret_string(client: SecretsClient, name: str) -> str | None:
    return client.get_secret_value(SecretId=name).get("SecretString")


def _parameter_value(client: SecretsClient, name: str) -> str:
    return client.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]


SECRETS_MANAGER = Source(
    prefix="secrets",
    title="AWS Secrets Manager",
    noun="secret",
    service="secretsmanager",
    iam_action="secretsmanager:GetSecretValue",
    arn_parts=7,
    arn_form="arn:aws:secretsmanager:<region>:<account>:secret:<name>",
    name_problem=_secret_name_problem,
    arn_name=lambda resource: resource[len("secret:") :] if resource.startswith("secret:") else None,
    # Secrets Manager appends `-` and six characters to a name: IAM's documentation advises `<name>-??????`
    arn_pattern=lambda name, region, account: f"arn:aws:secretsmanager:{region}:{account}:secret:{name}-??????",
    fetch=_secret_string,
    not_found=frozenset({"ResourceNotFoundException"}),
)
PARAMETER_STORE = Source(
    prefix="ssm",
    title="AWS Systems Manager Parameter Store",
    noun="parameter",
    service="ssm",
    iam_action="ssm:GetParameter",
    arn_parts=6,
    arn_form="arn:aws:ssm:<region>:<account>:parameter/<name>",
    name_problem=_parameter_name_problem,
    arn_name=lambda resource: "/" + resource[len("parameter/") :] if resource.startswith("parameter/") else None,
    # IAM names a parameter `parameter/` and its name without the leading slash of a hierarchy
    arn_pattern=lambda name, region, account: f"arn:aws:ssm:{region}:{account}:parameter/{name.removeprefix('/')}",
    fetch=_parameter_value,
    not_found=frozenset({"ParameterNotFound"}),
)
SOURCES = {
    "secrets": SECRETS_MANAGER,
    "aws:secretsmanager": SECRETS_MANAGER,
    "ssm": PARAMETER_STORE,
    "aws:ssm": PARAMETER_STORE,
}


@dataclass(frozen=True)
class Reference:
    """One reference: the config key it sits in, its store, the secret's or parameter's name or ARN, and the JSON
    field (None: the whole value)."""

    config_key: str
    source: Source
    name: str
    field: str | None

    @property
    def region(self) -> str | None:
        """The region of an ARN; None for a name (the run's region applies)."""
        return self.name.split(":")[3] if self.name.startswith("arn:") else None

    def arn_pattern(self, region: str, account: str) -> str:
        """The IAM resource that names this secret or parameter: its ARN, or the ARN of the name in `region`."""
        return self.name if self.name.startswith("arn:") else self.source.arn_pattern(self.name, region, account)

    def __str__(self) -> str:
        return f"{self.source.noun} {self.name!r}"


def parse_reference(config_key: str, prefix: str, body: str) -> Reference:
    """The reference `${<prefix>:<body>}`; ConfigError naming `config_key` when it names nothing."""
    source, parts, written = SOURCES[prefix], body.split(":"), f"${{{prefix}:{body}}}"
    if parts[0] == "arn":
        name = ":".join(parts[: source.arn_parts])
        in_arn = (
            source.arn_name(":".join(parts[5 : source.arn_parts]))
            if len(parts) >= source.arn_parts and parts[2] == source.service
            else None
        )
        if in_arn is None:
            raise ConfigError(config_key, f"{written} names no {source.title} {source.noun} ARN ({source.arn_form})")
        problem = source.name_problem(in_arn)
        if problem:
            raise ConfigError(config_key, f"{written}: {in_arn!r} {problem}")
        rest = parts[source.arn_parts :]
    else:
        name, rest = parts[0], parts[1:]
        problem = source.name_problem(name)
        if problem:
            raise ConfigError(config_key, f"{written}: {name!r} {problem}")
    field = ":".join(rest) if rest else None
    if field == "":
        raise ConfigError(config_key, f"{written} ends with ':' but names no JSON key")
    return Reference(config_key, source, name, field)


def config_map(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The key-value map of either connector JSON shape."""
    return document["config"] if isinstance(document.get("config"), Mapping) else document


def references(document: Mapping[str, Any]) -> list[Reference]:
    """Every reference in the document's string values, in key order; ConfigError naming a malformed one."""
    return [ref for key, value in config_map(document).items() for ref in _refs(key, value)]


def has_reference(value: Any) -> bool:
    return isinstance(value, str) and REFERENCE.search(value) is not None


def is_reference(value: Any) -> bool:
    """True when the whole value is one reference."""
    return isinstance(value, str) and REFERENCE.fullmatch(value.strip()) is not None


def resolve(document: Mapping[str, Any], client_for: Callable[[str, str | None], Any]) -> dict:
    """A copy of `document` with every reference replaced by its value. `client_for(service, region)` gives a
    boto3 client of `service` ("secretsmanager", "ssm"; region None: the run's own). Each secret and parameter is
    read once. ConfigError names the config key of a secret, parameter or JSON key that does not exist;
    SecretReadError reports any other failure of a read."""
    refs = references(document)
    if not refs:
        return dict(document)
    cache: dict[tuple[str, str], str] = {}

    def value_of(ref: Reference) -> str:
        stored = (ref.source.service, ref.name)
        if stored not in cache:
            cache[stored] = _read(client_for(ref.source.service, ref.region), ref)
        return _field(ref, cache[stored])

    def substitute(key: str, value: Any) -> Any:
        if not has_reference(value):
            return value
        return REFERENCE.sub(lambda m: value_of(parse_reference(key, m.group(1), m.group(2))), value)

    resolved = {k: substitute(k, v) for k, v in config_map(document).items()}
    if isinstance(document.get("config"), Mapping):
        return {**document, "config": resolved}
    return resolved


def default_client_for(config: Mapping[str, Any]) -> Callable[[str, str | None], SecretsClient]:
    """Clients from boto3's own settings; a name is looked up in the run's region (AWS_REGION, AWS_DEFAULT_REGION,
    else the config's s3.region), an ARN in its own."""

    def client_for(service: str, region: str | None) -> SecretsClient:
        import boto3

        own = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or config.get("s3.region")
        return boto3.client(service, region_name=region or own or "us-west-2")

    return client_for


def _refs(key: str, value: Any) -> Iterator[Reference]:
    if isinstance(value, str):
        for match in REFERENCE.finditer(value):
            yield parse_reference(key, match.group(1), match.group(2))


def _read(client: SecretsClient, ref: Reference) -> str:
    from botocore.exceptions import BotoCoreError, ClientError

    source = ref.source
    try:
        value = source.fetch(client, ref.name)
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code", "?")
        if code in source.not_found:
            raise ConfigError(ref.config_key, f"{ref} does not exist in {source.title}") from None
        raise SecretReadError(
            f"config key '{ref.config_key}': cannot read {ref} from {source.title}: "
            f"{code}: {e.response.get('Error', {}).get('Message', e)}"
        ) from None
    except BotoCoreError as e:
        raise SecretReadError(f"config key '{ref.config_key}': cannot reach {source.title} for {ref}: {e}") from None
    if value is None:
        raise ConfigError(ref.config_key, f"{ref} holds binary data; references need a SecretString")
    return value


def _field(ref: Reference, text: str) -> str:
    if ref.field is None:
        return text
    try:
        fields = json.loads(text)
    except json.JSONDecodeError:
        fields = None
    if not isinstance(fields, dict):
        raise ConfigError(
            ref.config_key,
            f"{ref} is not a JSON object, so it has no key {ref.field!r}; reference "
            f"its whole value as ${{{ref.source.prefix}:{ref.name}}}",
        )
    if ref.field not in fields:
        raise ConfigError(
            ref.config_key, f"{ref} has no key {ref.field!r} (it has {', '.join(sorted(fields)) or 'none'})"
        )
    value = fields[ref.field]
    return value if isinstance(value, str) else json.dumps(value)
