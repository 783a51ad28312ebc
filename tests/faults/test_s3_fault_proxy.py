"""The AWS fault proxy itself, with boto3 against moto's server through it: it names each request's operation as
the rules expect, forwards everything else unchanged, and fires rules as their skip, times and window say."""

from __future__ import annotations

import time

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError

from devtools.faults.aws_proxy import Rule
from tests.conftest import BUCKET, TABLE

ONE_TRY = Config(retries={"total_max_attempts": 1, "mode": "standard"})


def test_requests_are_named_by_service_and_operation(aws_faults, unique):
    s3, db = boto3.client("s3"), boto3.client("dynamodb")
    key = f"proxy/{unique}/object"
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    s3.head_object(Bucket=BUCKET, Key=key)
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
    etag = s3.upload_part(Bucket=BUCKET, Key=key, UploadId=upload, PartNumber=1, Body=b"y")["ETag"]
    s3.list_multipart_uploads(Bucket=BUCKET, Prefix=key)
    s3.complete_multipart_upload(
        Bucket=BUCKET, Key=key, UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]}
    )
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == b"y"
    db.get_item(TableName=TABLE, Key={"pk": {"S": unique}, "sk": {"S": "x"}})
    assert set(aws_faults.forwarded) == {
        ("s3", "PutObject"),
        ("s3", "HeadObject"),
        ("s3", "CreateMultipartUpload"),
        ("s3", "UploadPart"),
        ("s3", "ListMultipartUploads"),
        ("s3", "CompleteMultipartUpload"),
        ("s3", "GetObject"),
        ("dynamodb", "GetItem"),
    }


def test_a_rule_fires_after_skip_at_most_times_and_only_where_it_aims(aws_faults, unique):
    s3 = boto3.client("s3", config=ONE_TRY)
    aws_faults.add(Rule("internal", "s3", "PutObject", where=f"/{unique}/aimed", skip=1, times=2))
    outcomes = []
    for _ in range(5):
        try:
            s3.put_object(Bucket=BUCKET, Key=f"{unique}/aimed", Body=b"x")
            outcomes.append("ok")
        except ClientError as e:
            outcomes.append(e.response["Error"]["Code"])
    s3.put_object(Bucket=BUCKET, Key=f"{unique}/elsewhere", Body=b"x")
    assert outcomes == ["ok", "InternalError", "InternalError", "ok", "ok"]
    assert aws_faults.injected == {"internal": 2}


def test_an_answer_dropped_after_the_write_leaves_the_write_done(s3, aws_faults, unique):
    through = boto3.client("s3", config=ONE_TRY)
    aws_faults.add(Rule("drop_after", "s3", "PutObject", times=1))
    with pytest.raises(ConnectionClosedError):
        through.put_object(Bucket=BUCKET, Key=f"{unique}/written", Body=b"done")
    assert s3.get_object(Bucket=BUCKET, Key=f"{unique}/written")["Body"].read() == b"done"


def test_an_outage_lasts_its_window(aws_faults, unique):
    db = boto3.client("dynamodb", config=ONE_TRY)
    aws_faults.add(Rule("outage", "dynamodb", seconds=0.5))
    key = {"pk": {"S": unique}, "sk": {"S": "x"}}
    with pytest.raises(ConnectionClosedError):
        db.get_item(TableName=TABLE, Key=key)
    time.sleep(0.6)
    db.get_item(TableName=TABLE, Key=key)
    assert aws_faults.injected == {"outage": 1}
