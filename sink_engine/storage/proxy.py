"""The S3 client's HTTP(S) proxy (`s3.proxy.url`, `.user`, `.password`), as the Confluent S3 sink reads them: the
URL's scheme and host:port, and its user and password unless `s3.proxy.user` / `s3.proxy.password` are set. boto3
takes the proxy as one URL, so the user and password go into it, URL-quoted; botocore sends them as the
Proxy-Authorization of each request (or of the CONNECT of an HTTPS request)."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

from sink_engine.errors import ConfigError

URL_KEY = "s3.proxy.url"


def proxy_url(url: str | None, user: str | None, password: str | None) -> str | None:
    """The proxy URL with its credentials (None: no proxy) from `s3.proxy.url`, `s3.proxy.user` and
    `s3.proxy.password`; ConfigError naming the key at fault."""
    text = (url or "").strip()
    if not text:
        for key, value in (("s3.proxy.user", user), ("s3.proxy.password", password)):
            if value:
                raise ConfigError(key, f"is only used with {URL_KEY}")
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as e:
        raise ConfigError(URL_KEY, f"is not a URL: {e}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(URL_KEY, "must be http://host[:port] or https://host[:port]")
    user = user or (unquote(parts.username) if parts.username else None)
    password = password or (unquote(parts.password) if parts.password is not None else None)
    login = ""
    if user:
        login = quote(user, safe="") + (f":{quote(password, safe='')}" if password is not None else "") + "@"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme.lower()}://{login}{host}{f':{port}' if port else ''}"


def proxies(url: str | None) -> dict | None:
    """botocore's `Config(proxies=...)`: every S3 request, http and https, through `url`."""
    return {"http": url, "https": url} if url else None
