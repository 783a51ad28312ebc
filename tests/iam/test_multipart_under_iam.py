"""The job role's multipart completion under enforced IAM: it lists the key's incomplete uploads
(s3:ListBucketMultipartUploads on the connector's prefixes) and aborts the older ones; the calls are recorded for
test_recorded_calls.py.

This file runs after test_lambdas_under_iam.py on purpose: once this moto has served a multipart upload, its state
API (`/moto-api/data.json`, through which those tests read job runs back) answers 500 (docs/aws-fidelity.md)."""
from __future__ import annotations

from sink_engine.storage.multipart import MultipartUpload
from sink_engine.storage.object_options import ObjectOptions
from tests.iam.acting import acting_as


def test_the_job_role_aborts_a_stray_upload_of_a_key_it_completes(engine_run, world, deployed, principals, call_log):
    bucket = deployed.synthesized.settings.bucket_name
    key = "topics/orders/partition=0/orders+0+9999999999.json"
    with acting_as(principals["job"], call_log):
        s3 = principals["job"].credentials.client("s3")
        # given an upload of the key that a crashed attempt left (its id lost), then this attempt's own
        s3.create_multipart_upload(Bucket=bucket, Key=key)
        upload = MultipartUpload(s3, bucket, key, ObjectOptions(), {})
        upload.upload_part(1, b'{"n": 1}\n')
        # when it completes
        upload.complete()
        # then no upload of the key is left
        assert s3.list_multipart_uploads(Bucket=bucket, Prefix=key).get("Uploads", []) == []
    # and the key's object holds this attempt's bytes (read by the admin: the job role may not read data)
    assert world.admin.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read() == b'{"n": 1}\n'
