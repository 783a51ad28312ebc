"""`s3.proxy.url`, `.user` and `.password` (storage/proxy.py): read as the Confluent sink reads them, and the S3
client's requests sent through a real local proxy in front of moto, with the Proxy-Authorization they ask for."""

from __future__ import annotations

import base64
import json

import boto3
import pytest

from sink_engine.config import load_config
from sink_engine.config.credentials import MASK, clear_text_credential, masked
from sink_engine.errors import ConfigError
from sink_engine.storage.s3 import S3Access, s3_client, upload_client
from sink_engine.validation import parse_checked_config
from tests.conftest import BUCKET
from tests.http_proxy import Proxy

BASE = {
    "name": "orders",
    "topics": "orders",
    "bootstrap.servers": "localhost:9092",
    "s3.bucket.name": BUCKET,
    "s3.region": "us-east-1",
    "flush.size": "10",
    "format.class": "JsonFormat",
}


def proxy_of(**keys) -> str | None:
    return S3Access.from_config(parse_checked_config({**BASE, **keys})).proxy_url


@pytest.mark.parametrize(
    "keys, expected",
    [
        ({}, None),
        ({"s3.proxy.url": "http://proxy.internal:3128"}, "http://proxy.internal:3128"),
        ({"s3.proxy.url": "HTTPS://proxy.internal"}, "https://proxy.internal"),
        ({"s3.proxy.url": "http://proxy.internal:3128/current"}, "http://proxy.internal:3128"),  # the path is dropped
        ({"s3.proxy.url": "http://user:pass@proxy:8080"}, "http://user:pass@proxy:8080"),
        ({"s3.proxy.url": "http://user@proxy:8080"}, "http://user@proxy:8080"),
        (
            {
                "s3.proxy.url": "http://user:pass@proxy:8080",
                "s3.proxy.user": "realuser",
                "s3.proxy.password": "realpass",
            },
            "http://realuser:realpass@proxy:8080",
        ),  # the keys win over the URL's, as in the connector
        (
            {"s3.proxy.url": "http://proxy:8080", "s3.proxy.user": "svc@corp", "s3.proxy.password": "p:ss/w@rd%"},
            "http://svc%40corp:p%3Ass%2Fw%40rd%25@proxy:8080",
        ),  # quoted into the URL
    ],
)
def test_the_proxy_url_carries_the_login_the_connector_would_use(keys, expected):
    assert proxy_of(**keys) == expected


@pytest.mark.parametrize(
    "keys, key",
    [
        ({"s3.proxy.url": "socks5://proxy:1080"}, "s3.proxy.url"),
        ({"s3.proxy.url": "proxy:3128"}, "s3.proxy.url"),
        ({"s3.proxy.url": "http://proxy:port"}, "s3.proxy.url"),
        ({"s3.proxy.user": "user"}, "s3.proxy.user"),
        ({"s3.proxy.password": "secret"}, "s3.proxy.password"),
    ],
)
def test_a_proxy_setting_that_cannot_be_used_is_an_error_naming_its_key(keys, key):
    with pytest.raises(ConfigError) as caught:
        proxy_of(**keys)
    assert caught.value.key == key


@pytest.mark.parametrize(
    "login, authorization",
    [
        ({}, None),
        (
            {"s3.proxy.user": "svc@corp", "s3.proxy.password": "p:ss w@rd"},
            "Basic " + base64.b64encode(b"svc@corp:p:ss w@rd").decode(),
        ),
    ],
)
def test_s3_requests_go_through_the_proxy_with_its_login(stack, login, authorization):
    with Proxy() as proxy:
        # given a connector whose S3 client goes through a local proxy in front of moto
        settings = S3Access.from_config(parse_checked_config({**BASE, "s3.proxy.url": proxy.url, **login}))
        # when a task uploads an object and the driver reads it back
        upload_client(settings).put_object(Bucket=BUCKET, Key="proxied/object", Body=b"through the proxy")
        body = s3_client(settings).get_object(Bucket=BUCKET, Key="proxied/object")["Body"].read()
        seen = proxy.seen
    # then both requests went through the proxy, each with the Proxy-Authorization of the login
    assert body == b"through the proxy"
    assert [(s.method, s.target.split("/", 3)[-1]) for s in seen] == [
        ("PUT", f"{BUCKET}/proxied/object"),
        ("GET", f"{BUCKET}/proxied/object"),
    ]
    assert {s.proxy_authorization for s in seen} == {authorization}


def test_a_proxy_password_reference_is_resolved_when_the_config_is_loaded(stack, tmp_path):
    # given the proxy password as a Secrets Manager reference
    boto3.client("secretsmanager").create_secret(Name="sink/proxy-login", SecretString=json.dumps({"password": "pw/1"}))
    path = tmp_path / "connector.json"
    path.write_text(
        json.dumps(
            {
                **BASE,
                "s3.proxy.url": "http://proxy:3128",
                "s3.proxy.user": "svc",
                "s3.proxy.password": "${secrets:sink/proxy-login:password}",
            }
        )
    )
    # when a run loads the config, then the S3 client's proxy URL carries the secret's value
    assert S3Access.from_config(load_config(str(path))).proxy_url == "http://svc:pw%2F1@proxy:3128"


@pytest.mark.parametrize(
    "key, value, clear, shown",
    [
        ("s3.proxy.password", "hunter2", True, MASK),
        ("s3.proxy.password", "${secrets:sink/proxy-login:password}", False, "${secrets:sink/proxy-login:password}"),
        ("s3.proxy.url", "http://svc:hunter2@proxy:3128", True, f"http://svc:{MASK}@proxy:3128"),
        ("s3.proxy.url", "http://proxy:3128", False, "http://proxy:3128"),
        ("s3.proxy.user", "svc", False, "svc"),
    ],
)
def test_a_proxy_password_is_masked_and_refused_in_clear_text_in_a_deployed_file(key, value, clear, shown):
    assert clear_text_credential(key, value) is clear
    assert masked(key, value) == shown
