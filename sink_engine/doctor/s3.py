"""S3 as a run writes it (the S3 objects' own checks: target/s3_objects/doctor.py), with the S3 client the run
builds (s3.credentials.provider.class: static keys, the default chain or an assumed role; store.url; s3.proxy.url)
and the object options it writes with (SSE and its KMS key, canned ACL, tags).

The job role may write under its prefixes and never delete, so the write probe is a small object at a fixed key
per written topic, `<topics.dir>/<topic>/_doctor/<connector>.probe`, overwritten by every doctor run and never
removed: inside the grant of the topic's objects (WriteOwnPrefixes) and outside every partition folder the
deployed Athena tables project; Spark and pyarrow datasets skip folders whose names start with `_`. The write also
proves the bucket exists. The listing of incomplete uploads is the call a completed multipart upload makes
(storage/multipart.py). With an S3 dead-letter prefix, the same probe is written under it and read back, as the
dead-letter destination writes once and reads what an earlier attempt wrote.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.doctor import grants
from sink_engine.doctor.checks import Check, Failed
from sink_engine.doctor.settings import DoctorSettings
from sink_engine.storage.s3 import s3_client

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context

PROBE_FOLDER = "_doctor"
PROBE_TAGS = {"sink-engine": "doctor"}


def dead_letters(context: Context) -> str:
    settings = context.settings
    prefix = settings.dead_letters.s3_prefix or ""
    key = settings.naming.directory_delim.join((prefix.strip("/"), PROBE_FOLDER, f"{settings.run.connector}.probe"))
    body = put_probe(context, key)
    bucket = settings.run.bucket
    try:
        read = s3_client(settings.s3).get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as e:
        raise Failed(
            grants.describe(e, "s3", f"arn:aws:s3:::{bucket}/{key}", grantor(settings), sid="ReadOwnDeadLetters")
        ) from None
    if read != body:
        raise Failed(f"s3://{bucket}/{key} read back other bytes than were written")
    return f"wrote and read back s3://{bucket}/{key}"


def put_probe(context: Context, key: str) -> bytes:
    settings = context.settings
    bucket, options = settings.run.bucket, settings.object_options
    body = (
        f'{{"connector": "{settings.run.connector}", '
        f'"doctor_at": "{datetime.datetime.now(datetime.UTC).isoformat()}"}}\n'
    ).encode()
    try:
        s3_client(settings.s3).put_object(Bucket=bucket, Key=key, Body=body, **options.create_args(PROBE_TAGS))
    except ClientError as e:
        if grants.error_code(e) == "NoSuchBucket":
            raise Failed(f"bucket {bucket} does not exist (s3.bucket.name)") from None
        if grants.error_code(e).startswith("KMS"):
            kms = grants.grant_hint("kms:GenerateDataKey", options.kms_key_id)
            raise Failed(f"{grants.describe(e, 's3')}; {kms} (s3.sse.kms.key.id)") from None
        raise Failed(grants.describe(e, "s3", f"arn:aws:s3:::{bucket}/{key}", grantor(settings))) from None
    return body


def grantor(settings: DoctorSettings) -> str | None:
    assume = settings.s3.credentials.assume  # set with AwsAssumeRoleCredentialsProvider only
    if assume is None:
        return None
    return f"the role the S3 client assumes ({assume.role_arn}, s3.credentials.provider.sts.role.arn)"


def signer(settings: DoctorSettings) -> str:
    role = grantor(settings)
    return f"signed as {role}" if role else f"credentials: {settings.s3.credentials.provider}"


CHECKS = (
    Check(
        "s3 dead letters",
        dead_letters,
        service="s3",
        applies=lambda config: bool(DeadLetterSettings.from_config(config).s3_prefix),
    ),
)
