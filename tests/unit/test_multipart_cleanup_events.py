"""A multipart clean-up S3 refuses (the stray uploads' listing, an abort) leaves the upload itself intact and is
logged as a MULTIPART_CLEANUP_FAILED warning naming the bucket, the key, the step and S3's error code, instead of
being dropped silently (on AWS a missing s3:ListBucketMultipartUploads left every stray upload in place unseen)."""

from __future__ import annotations

import datetime
import json
import logging

import boto3
import pytest
from botocore.stub import Stubber

from sink_engine import events
from sink_engine.storage.multipart import MultipartUpload
from sink_engine.storage.object_options import ObjectOptions

BUCKET, KEY = "lake", "topics/orders/partition=0/orders+0+0000000000.json"
EARLIER, NOW = datetime.datetime(2026, 1, 1), datetime.datetime(2026, 1, 2)


@pytest.fixture
def stubbed_s3():
    client = boto3.client("s3", region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _started(client, stubber: Stubber) -> MultipartUpload:
    stubber.add_response("create_multipart_upload", {"UploadId": "mine"}, {"Bucket": BUCKET, "Key": KEY})
    stubber.add_response("upload_part", {"ETag": '"e1"'})
    upload = MultipartUpload(client, BUCKET, KEY, ObjectOptions(), {})
    upload.upload_part(1, b"x")
    return upload


def _cleanup_events(caplog) -> list[dict]:
    logged = [(json.loads(r.getMessage()), r.levelno) for r in caplog.records if r.name == "sink_engine"]
    return [dict(event, level=level) for event, level in logged if event["event"] == events.MULTIPART_CLEANUP_FAILED]


def test_a_refused_listing_of_the_strays_is_a_warning_and_the_object_still_completes(stubbed_s3, caplog):
    client, stubber = stubbed_s3
    upload = _started(client, stubber)
    # given S3 refuses the listing (the role lacks s3:ListBucketMultipartUploads, or a condition denies it)
    stubber.add_client_error(
        "list_multipart_uploads",
        "AccessDenied",
        "Access Denied",
        403,
        expected_params={"Bucket": BUCKET, "Prefix": KEY},
    )
    stubber.add_response(
        "complete_multipart_upload",
        {},
        {
            "Bucket": BUCKET,
            "Key": KEY,
            "UploadId": "mine",
            "MultipartUpload": {"Parts": [{"PartNumber": 1, "ETag": '"e1"'}]},
        },
    )
    # when the upload completes
    with caplog.at_level(logging.INFO, logger="sink_engine"):
        upload.complete()
    # then the object is completed, and the skipped clean-up is a warning naming bucket, key, step and code
    assert _cleanup_events(caplog) == [
        {
            "event": "MULTIPART_CLEANUP_FAILED",
            "level": logging.WARNING,
            "bucket": BUCKET,
            "key": KEY,
            "prefix": KEY,
            "step": "list",
            "error_code": "AccessDenied",
            "error": "An error occurred (AccessDenied) when calling the ListMultipartUploads operation: Access Denied",
        }
    ]


def test_a_refused_abort_of_a_stray_is_a_warning_naming_the_upload(stubbed_s3, caplog):
    client, stubber = stubbed_s3
    upload = _started(client, stubber)
    # given a stray upload of the key, started before this one, whose abort S3 refuses
    stubber.add_response(
        "list_multipart_uploads",
        {
            "Uploads": [
                {"Key": KEY, "UploadId": "stray", "Initiated": EARLIER},
                {"Key": KEY, "UploadId": "mine", "Initiated": NOW},
            ]
        },
    )
    stubber.add_response("complete_multipart_upload", {})
    stubber.add_client_error(
        "abort_multipart_upload",
        "AccessDenied",
        "Access Denied",
        403,
        expected_params={"Bucket": BUCKET, "Key": KEY, "UploadId": "stray"},
    )
    # when this upload completes
    with caplog.at_level(logging.INFO, logger="sink_engine"):
        upload.complete()
    # then the stray is left with a warning naming it
    (event,) = _cleanup_events(caplog)
    assert (event["level"], event["step"], event["upload_id"], event["error_code"]) == (
        logging.WARNING,
        "abort",
        "stray",
        "AccessDenied",
    )


def test_a_clean_listing_and_abort_log_no_warning(stubbed_s3, caplog):
    client, stubber = stubbed_s3
    upload = _started(client, stubber)
    stubber.add_response(
        "list_multipart_uploads",
        {
            "Uploads": [
                {"Key": KEY, "UploadId": "stray", "Initiated": EARLIER},
                {"Key": KEY, "UploadId": "mine", "Initiated": NOW},
            ]
        },
    )
    stubber.add_response("complete_multipart_upload", {})
    stubber.add_response("abort_multipart_upload", {}, {"Bucket": BUCKET, "Key": KEY, "UploadId": "stray"})
    with caplog.at_level(logging.INFO, logger="sink_engine"):
        upload.complete()
    assert _cleanup_events(caplog) == []
