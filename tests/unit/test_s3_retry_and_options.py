"""Upload retries with jittered backoff, part ranges and the object arguments of the s3.* keys."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from sink_engine.storage.multipart import part_bounds
from sink_engine.storage.object_options import ObjectOptions, file_tags
from sink_engine.storage.retry import MAX_BACKOFF_MS, RetryPolicy, backoff_ms


def client_error(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject")


def failing(errors: list):
    """A request that raises the given errors in turn, then answers "ok"; counts its calls."""
    calls = []

    def request():
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return "ok"

    return request, calls


def test_backoff_doubles_with_full_jitter_up_to_the_cap():
    assert [backoff_ms(n, 200, rand=lambda: 1.0) for n in (1, 2, 3)] == [200, 400, 800]
    assert backoff_ms(30, 200, rand=lambda: 1.0) == MAX_BACKOFF_MS
    assert backoff_ms(3, 200, rand=lambda: 0.25) == 200


def test_retryable_errors_are_retried_with_growing_waits():
    waits = []
    policy = RetryPolicy(retries=3, base_ms=100, sleep=waits.append, rand=lambda: 1.0)
    request, calls = failing(
        [client_error("SlowDown", 503), EndpointConnectionError(endpoint_url="x"), client_error("InternalError", 500)]
    )
    assert policy.call(request) == "ok"
    assert len(calls) == 4 and waits == [0.1, 0.2, 0.4]


def test_it_gives_up_after_the_retries_and_never_retries_a_client_fault():
    policy = RetryPolicy(retries=2, base_ms=0, sleep=lambda s: None)
    request, calls = failing([client_error("SlowDown", 503)] * 5)
    with pytest.raises(ClientError):
        policy.call(request)
    assert len(calls) == 3
    request, calls = failing([client_error("AccessDenied", 403)])
    with pytest.raises(ClientError):
        policy.call(request)
    assert len(calls) == 1


def test_parts_are_all_full_but_the_last():
    assert part_bounds(11, 5) == [(0, 5), (5, 10), (10, 11)]
    assert part_bounds(10, 5) == [(0, 5), (5, 10)]


def test_object_arguments_follow_the_keys():
    options = ObjectOptions(sse="aws:kms", kms_key_id="alias/lake", acl="bucket-owner-full-control", tagging=True)
    assert options.create_args(file_tags(10, 19, 10)) == {
        "ServerSideEncryption": "aws:kms",
        "SSEKMSKeyId": "alias/lake",
        "ACL": "bucket-owner-full-control",
        "Tagging": "startOffset=10&endOffset=19&recordCount=10",
    }
    assert ObjectOptions(sse="aes256").create_args(file_tags(0, 0, 1)) == {"ServerSideEncryption": "AES256"}
