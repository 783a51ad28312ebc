"""The connector index reader the trigger and the replay share, against moto (in-process): one GetObject per TTL,
errors naming the URI."""

from __future__ import annotations

import boto3
import pytest

from lambdas.shared.connector_index import INDEX_TTL_MS, ConnectorIndex, ConnectorIndexError
from tests.connector_index import publish_index
from tests.lambdas.conftest import Clock

URI = "s3://lake/_connectors/_index.json"


@pytest.fixture
def reads(aws) -> tuple[object, list[str]]:
    """An S3 client and the keys of the GetObject calls it makes."""
    s3, keys = boto3.client("s3"), []
    s3.meta.events.register("before-parameter-build.s3.GetObject", lambda params, **_: keys.append(params["Key"]))
    return s3, keys


def test_read_once_then_again_when_the_copy_is_ttl_old_or_the_clock_went_back(reads):
    s3, keys = reads
    clock = Clock(1_000_000)
    publish_index(URI, [{"name": "a"}], s3)
    index = ConnectorIndex(URI, s3, lambda entries: [e["name"] for e in entries], clock)
    assert index.get() == ["a"] and len(keys) == 1
    publish_index(URI, [{"name": "a"}, {"name": "b"}], s3)
    clock.now_ms += INDEX_TTL_MS - 1
    assert index.get() == ["a"] and len(keys) == 1
    clock.now_ms += 1
    assert index.get() == ["a", "b"] and len(keys) == 2
    clock.now_ms -= 1  # a wall clock set back does not keep the copy for longer
    assert index.get() == ["a", "b"] and len(keys) == 3


@pytest.mark.parametrize("uri", ["lake/_connectors/_index.json", "s3://lake", "s3:///_index.json"])
def test_a_uri_that_is_not_an_s3_object_is_refused_naming_it(aws, uri):
    with pytest.raises(ConnectorIndexError, match=f"connector index {uri}: is not an s3://"):
        ConnectorIndex(uri, boto3.client("s3"), list, Clock(1_000_000))


def test_an_unreadable_index_names_the_uri_and_the_code(reads):
    s3, _ = reads
    index = ConnectorIndex("s3://no-such-bucket/_connectors/_index.json", s3, list, Clock(1_000_000))
    with pytest.raises(
        ConnectorIndexError, match="no-such-bucket/_connectors/_index.json: cannot be read: NoSuchBucket"
    ):
        index.get()
