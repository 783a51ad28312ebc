"""`${secrets:...}` references in a connector config, resolved from AWS Secrets Manager when a run starts.

A reference stands for a secret's value anywhere in a string value of the config, alone or inside text (a JAAS
config's `password="${secrets:msk/sink:password}"`):

- `${secrets:<secret-id>:<json-key>}`: the field `<json-key>` of the secret, whose SecretString is a JSON object
  (Confluent's `${secrets:<path>:<key>}` style); `${secrets:<secret-id>}`: the whole SecretString;
- `${aws:secretsmanager:<secret-id>[:<json-key>]}` says the same.

`<secret-id>` is a secret's name (no `:`) or its complete ARN (`arn:aws:secretsmanager:<region>:<account>:secret:
<name>-<6 characters>`), whose region is the one asked. The job resolves references on the driver before Spark
tasks get the config; `sink-engine validate` and `cdk synth` only check their form. The deployed job role may
read exactly the referenced secrets (`secret_arns`, infra/job_policy.py).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from sink_engine.errors import ConfigError, SinkError

REFERENCE = re.compile(r"\$\{(?:secrets|aws:secretsmanager):([^}]*)\}")
_ARN_PARTS = 7  # arn:aws:secretsmanager:<region>:<account>:secret:<name>
_NAME = re.compile(r"[A-Za-z0-9/_+=.@-]{1,512}")


class SecretReadError(SinkError):
    """AWS Secrets Manager did not give a referenced secret (access denied, throttled, unreachable)."""


@dataclass(frozen=True)
class SecretRef:
    """One reference: the config key it sits in, the secret's name or ARN, and the JSON field (None: the whole)."""

    config_key: str
    secret_id: str
    field: str | None

    @property
    def region(self) -> str | None:
        """The region of an ARN; None for a name (the run's region applies)."""
        return self.secret_id.split(":")[3] if self.secret_id.startswith("arn:") else None

    def arn_pattern(self, region: str, account: str) -> str:
        """The IAM resource that names this secret: its ARN, or for a name the name plus Secrets Manager's
        six-character suffix (`-??????`), as IAM's documentation advises."""
        if self.secret_id.startswith("arn:"):
            return self.secret_id
        return f"arn:aws:secretsmanager:{region}:{account}:secret:{self.secret_id}-??????"


def parse_reference(config_key: str, body: str) -> SecretRef:
    """The reference whose text between `${secrets:` and `}` is `body`; ConfigError naming `config_key`."""
    parts = body.split(":")
    if parts[0] == "arn":
        if len(parts) < _ARN_PARTS or parts[2] != "secretsmanager" or parts[5] != "secret" or not parts[6]:
            raise ConfigError(config_key, f"${{secrets:{body}}} names no Secrets Manager secret ARN "
                                          "(arn:aws:secretsmanager:<region>:<account>:secret:<name>)")
        secret_id, rest = ":".join(parts[:_ARN_PARTS]), parts[_ARN_PARTS:]
    else:
        secret_id, rest = parts[0], parts[1:]
        if not _NAME.fullmatch(secret_id):
            raise ConfigError(config_key, f"${{secrets:{body}}}: {secret_id!r} is not a secret name or ARN")
    field = ":".join(rest) if rest else None
    if field == "":
        raise ConfigError(config_key, f"${{secrets:{body}}} ends with ':' but names no JSON key")
    return SecretRef(config_key, secret_id, field)


def config_map(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The key-value map of either connector JSON shape."""
    return document["config"] if isinstance(document.get("config"), Mapping) else document


def references(document: Mapping[str, Any]) -> list[SecretRef]:
    """Every reference in the document's string values, in key order; ConfigError naming a malformed one."""
    return [ref for key, value in config_map(document).items() for ref in _refs(key, value)]


def has_reference(value: Any) -> bool:
    return isinstance(value, str) and REFERENCE.search(value) is not None


def is_reference(value: Any) -> bool:
    """True when the whole value is one reference."""
    return isinstance(value, str) and REFERENCE.fullmatch(value.strip()) is not None


def resolve(document: Mapping[str, Any], client_for: Callable[[str | None], Any]) -> dict:
    """A copy of `document` with every reference replaced by its value. `client_for(region)` gives a
    secretsmanager client (region None: the run's own). Each secret is read once. ConfigError names the config
    key of a secret or JSON key that does not exist; SecretReadError reports any other failure of the read."""
    refs = references(document)
    if not refs:
        return dict(document)
    cache: dict[str, str] = {}

    def value_of(ref: SecretRef) -> str:
        if ref.secret_id not in cache:
            cache[ref.secret_id] = _read(client_for(ref.region), ref)
        return _field(ref, cache[ref.secret_id])

    def substitute(key: str, value: Any) -> Any:
        if not has_reference(value):
            return value
        return REFERENCE.sub(lambda m: value_of(parse_reference(key, m.group(1))), value)

    resolved = {k: substitute(k, v) for k, v in config_map(document).items()}
    if isinstance(document.get("config"), Mapping):
        return {**document, "config": resolved}
    return resolved


def default_client_for(config: Mapping[str, Any]) -> Callable[[str | None], Any]:
    """secretsmanager clients from boto3's own settings; a name is looked up in the run's region (AWS_REGION,
    AWS_DEFAULT_REGION, else the config's s3.region), an ARN in its own."""
    def client_for(region: str | None):
        import boto3

        own = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or config.get("s3.region")
        return boto3.client("secretsmanager", region_name=region or own or "us-west-2")

    return client_for


def _refs(key: str, value: Any) -> Iterator[SecretRef]:
    if isinstance(value, str):
        for match in REFERENCE.finditer(value):
            yield parse_reference(key, match.group(1))


def _read(client, ref: SecretRef) -> str:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = client.get_secret_value(SecretId=ref.secret_id)
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code", "?")
        if code == "ResourceNotFoundException":
            raise ConfigError(ref.config_key, f"secret {ref.secret_id!r} does not exist in AWS Secrets Manager") from None
        raise SecretReadError(f"config key '{ref.config_key}': cannot read secret {ref.secret_id!r} from AWS Secrets "
                              f"Manager: {code}: {e.response.get('Error', {}).get('Message', e)}") from None
    except BotoCoreError as e:
        raise SecretReadError(f"config key '{ref.config_key}': cannot reach AWS Secrets Manager for secret "
                              f"{ref.secret_id!r}: {e}") from None
    if "SecretString" not in answer:
        raise ConfigError(ref.config_key, f"secret {ref.secret_id!r} holds binary data; references need a SecretString")
    return answer["SecretString"]


def _field(ref: SecretRef, text: str) -> str:
    if ref.field is None:
        return text
    try:
        fields = json.loads(text)
    except json.JSONDecodeError:
        fields = None
    if not isinstance(fields, dict):
        raise ConfigError(ref.config_key, f"secret {ref.secret_id!r} is not a JSON object, so it has no key "
                                          f"{ref.field!r}; reference the whole secret as ${{secrets:{ref.secret_id}}}")
    if ref.field not in fields:
        raise ConfigError(ref.config_key, f"secret {ref.secret_id!r} has no key {ref.field!r} "
                                          f"(it has {', '.join(sorted(fields)) or 'none'})")
    value = fields[ref.field]
    return value if isinstance(value, str) else json.dumps(value)
