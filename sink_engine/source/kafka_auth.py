"""The Kafka client's authentication, from the settings users bring: Java's (`sasl.jaas.config`, callback
handlers), librdkafka's own (`sasl.username`/`sasl.password`), or Confluent Cloud's (`kafka.api.key`/`.secret`).

- MSK IAM as Java clients configure it (`sasl.mechanism=AWS_MSK_IAM` with `IAMLoginModule`, or `OAUTHBEARER`
  with `OAuthBearerLoginModule` and MSK IAM's callback handler) becomes librdkafka's OAUTHBEARER with tokens from
  aws-msk-iam-sasl-signer-python, signed with the job's own credentials;
- `PlainLoginModule` and `ScramLoginModule` give `sasl.username` and `sasl.password`, with the mechanism the
  config names (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512);
- `kafka.api.key`/`kafka.api.secret` are the username and password of SCRAM-SHA-512 over SASL_SSL (MSK's
  SASL/SCRAM), unless the config names another mechanism or protocol.

Anything else that would authenticate (another login module, OAUTHBEARER without MSK IAM, a callback handler
class, a JAAS option that changes who signs) is a ConfigError naming its key: no credential is dropped silently,
and credentials are never sent over a protocol that would not send them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sink_engine.errors import ConfigError
from sink_engine.source.jaas import JaasLogin, parse_jaas

if TYPE_CHECKING:
    from sink_engine.source.settings import SourceSettings

MSK_IAM_PACKAGE = "software.amazon.msk.auth.iam."
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_PROTOCOLS = ("SASL_SSL", "SASL_PLAINTEXT")
HANDLER_KEYS = ("sasl.login.callback.handler.class", "sasl.client.callback.handler.class")
# settings this module decides; client_config passes none of them through as they are
AUTH_KEYS = frozenset(
    {
        "sasl.jaas.config",
        "sasl.mechanism",
        "sasl.mechanisms",
        "sasl.username",
        "sasl.password",
        "security.protocol",
        *HANDLER_KEYS,
    }
)
# MSK IAM login options that change nothing about who signs; the others (a role, a profile) would
_MSK_IAM_HARMLESS_OPTIONS = frozenset({"awsDebugCreds", "awsMaxRetries", "awsMaxBackOffTimeMs"})
_LOGIN_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
}


class Settings:
    """Kafka client settings by name, each with the config key it came from (top-level or consumer.override.*)."""

    def __init__(self, found: dict[str, tuple[str, str]]):
        self._found = found

    def value(self, name: str) -> str | None:
        return self._found[name][0] if name in self._found else None

    def source(self, name: str) -> str:
        return self._found[name][1] if name in self._found else f"consumer.override.{name}"


def authentication(source_settings: SourceSettings, settings: Settings) -> dict:
    """librdkafka's security settings for `source_settings` (a SourceSettings); ConfigError naming the key at fault."""
    mechanism_name = "sasl.mechanisms" if settings.value("sasl.mechanisms") else "sasl.mechanism"
    mechanism = (settings.value(mechanism_name) or "").strip().upper()
    jaas = _jaas(settings)
    if is_msk_iam(mechanism, [settings.value(k) or "" for k in HANDLER_KEYS], jaas):
        return _msk_iam(source_settings, settings, jaas)
    for key in HANDLER_KEYS:
        if settings.value(key):
            raise ConfigError(
                settings.source(key),
                f"{settings.value(key)} is a Java class; only MSK IAM's callback "
                f"handler ({MSK_IAM_PACKAGE}...) is understood",
            )
    credentials = _credentials(source_settings, settings, jaas, mechanism)
    protocol = (settings.value("security.protocol") or "").strip().upper()
    if credentials is None:
        if mechanism in PASSWORD_MECHANISMS:
            raise ConfigError(
                settings.source(mechanism_name),
                f"{mechanism} needs a username and password: "
                "sasl.jaas.config (PlainLoginModule or ScramLoginModule), or kafka.api.key and "
                "kafka.api.secret",
            )
        if mechanism == "OAUTHBEARER":
            raise ConfigError(
                settings.source(mechanism_name),
                "OAUTHBEARER is understood only as MSK IAM auth "
                f"(callback handler {MSK_IAM_PACKAGE}IAMOAuthBearerLoginCallbackHandler)",
            )
        return {
            **({"security.protocol": protocol} if protocol else {}),
            **({"sasl.mechanisms": mechanism} if mechanism else {}),
        }
    (username, password), origin = credentials
    if not mechanism and origin == "kafka.api.key":
        mechanism = "SCRAM-SHA-512"
    if mechanism not in PASSWORD_MECHANISMS:
        raise ConfigError(
            settings.source(mechanism_name),
            f"{mechanism or 'unset'}: the credentials of {origin} need one of {', '.join(PASSWORD_MECHANISMS)}",
        )
    if not protocol and origin == "kafka.api.key":
        protocol = "SASL_SSL"
    if protocol not in SASL_PROTOCOLS:
        raise ConfigError(
            settings.source("security.protocol"),
            f"is {protocol or 'unset (PLAINTEXT)'}, over which the "
            f"credentials of {origin} would not be sent: set SASL_SSL (or SASL_PLAINTEXT)",
        )
    return {
        "security.protocol": protocol,
        "sasl.mechanisms": mechanism,
        "sasl.username": username,
        "sasl.password": password,
    }


def is_msk_iam(mechanism: str, handlers: list[str], jaas: JaasLogin | None) -> bool:
    """MSK IAM auth as Java clients configure it: `AWS_MSK_IAM`, or `OAUTHBEARER` with MSK IAM's callback handler."""
    return mechanism == "AWS_MSK_IAM" or (
        mechanism == "OAUTHBEARER" and any(h.strip().startswith(MSK_IAM_PACKAGE) for h in handlers)
    )


def _jaas(settings: Settings) -> JaasLogin | None:
    text = settings.value("sasl.jaas.config")
    if not text or not text.strip():
        return None
    try:
        return parse_jaas(text)
    except ValueError as e:
        raise ConfigError(settings.source("sasl.jaas.config"), f"is not a JAAS login: {e}") from None


def _msk_iam(source_settings: SourceSettings, settings: Settings, jaas: JaasLogin | None) -> dict:
    source = settings.source("sasl.jaas.config")
    if jaas is not None:
        if jaas.module_name not in ("IAMLoginModule", "OAuthBearerLoginModule"):
            raise ConfigError(
                source, f"{jaas.module} does not go with MSK IAM auth (IAMLoginModule or OAuthBearerLoginModule)"
            )
        refused = sorted(set(jaas.options) - _MSK_IAM_HARMLESS_OPTIONS)
        if refused:
            raise ConfigError(
                source,
                f"option {refused[0]} would change who signs; the job signs MSK IAM requests "
                "with its own credentials (its role): remove it",
            )
    for other in ("kafka.api.key", "sasl.username"):
        if source_settings.kafka_api_key if other == "kafka.api.key" else settings.value(other):
            raise ConfigError(
                other if other == "kafka.api.key" else settings.source(other),
                "is a credential, but the config also asks for MSK IAM auth; use one of them",
            )
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or source_settings.region
    protocol = (settings.value("security.protocol") or "SASL_SSL").strip().upper()
    return {"security.protocol": protocol, "sasl.mechanisms": "OAUTHBEARER", "oauth_cb": MskIamToken(region)}


def _credentials(
    source_settings: SourceSettings, settings: Settings, jaas: JaasLogin | None, mechanism: str
) -> tuple[tuple[str, str | None], str] | None:
    """((username, password), the key they came from), or None; ConfigError when two keys give credentials."""
    found: list[tuple[tuple[str, str | None], str]] = []
    if jaas is not None:
        found.append((_jaas_credentials(jaas, settings, mechanism), settings.source("sasl.jaas.config")))
    if source_settings.kafka_api_key:
        found.append(((source_settings.kafka_api_key, source_settings.kafka_api_secret), "kafka.api.key"))
    if settings.value("sasl.username") or settings.value("sasl.password"):
        found.append(
            (
                (settings.value("sasl.username") or "", settings.value("sasl.password") or ""),
                settings.source("sasl.username"),
            )
        )
    if len(found) > 1:
        raise ConfigError(found[1][1], f"gives Kafka credentials, and so does {found[0][1]}; keep one of them")
    return found[0] if found else None


def _jaas_credentials(jaas: JaasLogin, settings: Settings, mechanism: str) -> tuple[str, str]:
    source = settings.source("sasl.jaas.config")
    if jaas.module_name == "OAuthBearerLoginModule":
        raise ConfigError(
            source,
            "OAuthBearerLoginModule is understood only with MSK IAM's callback handler "
            f"({MSK_IAM_PACKAGE}IAMOAuthBearerLoginCallbackHandler); OAUTHBEARER with a token "
            "endpoint or unsecured tokens is not supported",
        )
    if jaas.module not in _LOGIN_MODULES:
        raise ConfigError(
            source,
            f"login module {jaas.module} is not supported; use "
            "org.apache.kafka.common.security.plain.PlainLoginModule or "
            "org.apache.kafka.common.security.scram.ScramLoginModule (or MSK IAM auth)",
        )
    mechanisms = _LOGIN_MODULES[jaas.module]
    if mechanism not in mechanisms:
        key = settings.source("sasl.mechanisms" if settings.value("sasl.mechanisms") else "sasl.mechanism")
        raise ConfigError(key, f"is {mechanism or 'unset'}; {jaas.module_name} needs {' or '.join(mechanisms)}")
    if str(jaas.options.get("tokenauth", "false")).lower() == "true":
        raise ConfigError(source, "tokenauth=true (delegation tokens) is not supported")
    unknown = sorted(set(jaas.options) - {"username", "password", "tokenauth"})
    if unknown:
        raise ConfigError(source, f"{jaas.module_name} has no option {unknown[0]}")
    missing = [o for o in ("username", "password") if not jaas.options.get(o)]
    if missing:
        raise ConfigError(source, f'{jaas.module_name} needs {" and ".join(missing)}="..."')
    return jaas.options["username"], jaas.options["password"]


class MskIamToken:
    """oauth_cb for MSK IAM: a signed token and its expiry in seconds (librdkafka's unit)."""

    def __init__(self, region: str):
        self.region = region

    def __call__(self, _config_str: str | None) -> tuple[str, float]:
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

        token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(self.region)
        return token, expiry_ms / 1000
