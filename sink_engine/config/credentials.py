"""Which config values carry a credential: masked when `validate` shows them, and refused in clear text in a
deployed connector file (which is published to S3 and carried in the CloudFormation template), where they must be
`${secrets:...}` or `${ssm:...}` references (sink_engine/secrets.py)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from sink_engine.secrets import REFERENCE, is_reference

CREDENTIAL_KEY = re.compile(
    r"(^|\.)(sasl\.jaas\.config|sasl\.password|ssl\.key\.password|ssl\.keystore\.password|ssl\.truststore\.password|"
    r"ssl\.key\.pem|ssl\.keystore\.key|sasl\.oauthbearer\.client\.secret|basic\.auth\.user\.info|bearer\.auth\.token|"
    r"aws\.secret\.access\.key|aws\.access\.key\.id|kafka\.api\.secret|s3\.proxy\.password|s3\.sse\.customer\.key|"
    r"s3\.sse\.key)$"
)
_URL_KEY = re.compile(r"(^|\.)schema\.registry\.url$|^s3\.proxy\.url$")
# JAAS options whose value is a secret (password="...", clientSecret="...", token="...")
_JAAS_SECRET_OPTION = re.compile(
    r"""(\w*(?:password|secret|token)\w*)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;]+)""", re.IGNORECASE
)
MASK = "********"


def clear_text_credential(key: str, value: object) -> bool:
    """True when `value` of `key` holds a credential that is not a `${secrets:...}` or `${ssm:...}` reference."""
    if value is None or str(value).strip() == "":
        return False
    text = str(value)
    if _URL_KEY.search(key):
        return any(
            _url_password(url) not in (None, "") and not is_reference(_url_password(url)) for url in text.split(",")
        )
    if not CREDENTIAL_KEY.search(key):
        return False
    if key.endswith("sasl.jaas.config"):
        return any(not is_reference(v.strip('"')) for _, v in _JAAS_SECRET_OPTION.findall(text))
    if key.endswith("basic.auth.user.info") and not is_reference(text):
        return not is_reference(text.partition(":")[2])
    return not is_reference(text)


def masked(key: str, value: object) -> object:
    """`value` for display: the secret parts of a credential replaced by ********, references kept."""
    if not isinstance(value, str) or not (CREDENTIAL_KEY.search(key) or _URL_KEY.search(key)):
        return value
    if key.endswith("sasl.jaas.config"):
        return _JAAS_SECRET_OPTION.sub(
            lambda m: m.group(0) if is_reference(m.group(2).strip('"')) else f'{m.group(1)}="{MASK}"', value
        )
    if _URL_KEY.search(key):
        return ",".join(_mask_url(url) for url in value.split(","))
    if key.endswith("basic.auth.user.info") and ":" in value and not is_reference(value):
        user, _, secret = value.partition(":")
        return f"{user}:{secret if is_reference(secret) else MASK}"
    return value if REFERENCE.fullmatch(value.strip()) or not value else MASK


def _url_password(url: str) -> str | None:
    try:
        return urlsplit(url.strip()).password
    except ValueError:
        return None


def _mask_url(url: str) -> str:
    password = _url_password(url)
    if not password or is_reference(password):
        return url
    return url.replace(f":{password}@", f":{MASK}@", 1)
