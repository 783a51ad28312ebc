"""The job role's multipart completion under enforced IAM: it lists the key's incomplete uploads
(s3:ListBucketMultipartUploads on the bucket) and aborts the older ones (s3:AbortMultipartUpload under its own
prefixes). moto ignores conditions, so the calls the clean-up made are also evaluated as AWS would: with the
condition keys the SAR gives each action (no s3:prefix for ListBucketMultipartUploads), against the role's
documents as deployed, and against the statement the role had before (a prefix condition), which denies the listing."""

from __future__ import annotations

import pytest

from sink_engine import events
from sink_engine.storage.multipart import MultipartUpload
from sink_engine.storage.object_options import ObjectOptions
from tests.iam.acting import acting_as
from tests.iam.actions import needs
from tests.iam.evaluate import allows
from tests.iam.policies import PolicyDocument

KEY = "topics/orders/partition=0/orders+0+9999999999.json"


@pytest.fixture(scope="module")
def cleanup(engine_run, world, deployed, principals, call_log):
    """A stray upload of KEY (left by a crashed attempt, its id lost), then an upload of KEY completed by the job
    role: (the stray's id, the uploads of KEY left, the needs of the clean-up's calls, the events logged)."""
    bucket = deployed.synthesized.settings.bucket_name
    before = len(call_log.calls())
    with acting_as(principals["job"], call_log):
        s3 = principals["job"].credentials.client("s3")
        stray = s3.create_multipart_upload(Bucket=bucket, Key=KEY)["UploadId"]
        upload = MultipartUpload(s3, bucket, KEY, ObjectOptions(), {})
        upload.upload_part(1, b'{"n": 1}\n')
        with pytest.MonkeyPatch.context() as patch:
            logged = []
            patch.setattr(events, "emit", lambda event, **fields: logged.append(event))
            upload.complete()
        left = s3.list_multipart_uploads(Bucket=bucket, Prefix=KEY).get("Uploads", [])
    made = [c for c in call_log.calls()[before:] if c.operation in ("ListMultipartUploads", "AbortMultipartUpload")]
    return stray, left, [n for c in made for n in needs(c, deployed.facts())], logged


def test_the_job_role_aborts_a_stray_upload_of_a_key_it_completes(cleanup, world, deployed):
    stray, left, found, logged = cleanup
    # the stray was listed and aborted, nothing of the key is left, and nothing was refused
    assert ("s3:AbortMultipartUpload", f"arn:aws:s3:::{deployed.synthesized.settings.bucket_name}/{KEY}") in {
        (n.action, n.resource) for n in found if n.call.params.get("UploadId") == stray
    }
    assert left == [] and events.MULTIPART_CLEANUP_FAILED not in logged
    # and the key's object holds this attempt's bytes (read by the admin: the job role may not read data)
    bucket = deployed.synthesized.settings.bucket_name
    assert world.admin.client("s3").get_object(Bucket=bucket, Key=KEY)["Body"].read() == b'{"n": 1}\n'


def test_the_clean_ups_calls_pass_the_roles_documents_with_the_sars_condition_keys(cleanup, principals):
    _, _, found, _ = cleanup
    listing = [n for n in found if n.action == "s3:ListBucketMultipartUploads"]
    assert listing and all(dict(n.context) == {} for n in listing)  # the SAR gives the listing no s3:prefix
    assert [str(n) for n in found if not allows(principals["job"].documents, n)] == []


def test_the_old_prefix_condition_on_the_listing_would_deny_it_on_aws(cleanup, principals):
    _, _, found, _ = cleanup
    # the connector's own prefixes, which the listed key lies under: the request carries no s3:prefix to match
    prefixes = [f"{p}*" for p in ("topics/orders/", "topics/payments/")]
    old = [PolicyDocument(d.source, _with_prefix_condition(d.document, prefixes)) for d in principals["job"].documents]
    denied = {n.action for n in found if not allows(old, n)}
    assert denied == {"s3:ListBucketMultipartUploads"}


def _with_prefix_condition(document: dict, prefixes: list[str]) -> dict:
    """`document` with the listing statement as it was: conditioned on s3:prefix (which its requests never carry)."""
    statements = [
        {**s, "Condition": {"StringLike": {"s3:prefix": prefixes}}} if s.get("Sid") == "ListUploads" else s
        for s in document["Statement"]
    ]
    return {**document, "Statement": statements}
