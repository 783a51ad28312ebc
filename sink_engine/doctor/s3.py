"""S3 as a run writes it, with the S3 client the run builds (s3.credentials.provider.class: static keys, the
default chain or an assumed role; store.url; s3.proxy.url) and the object options it writes with (SSE and its KMS
key, canned ACL, tags).

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

from botocore.exceptions import ClientError

from sink_engine.doctor import grants
from sink_engine.doctor.checks import Check, Failed, Skipped
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import S3Access, s3_client
from sink_engine.transform.settings import TransformSettings

PROBE_FOLDER = "_doctor"
PROBE_TAGS = {"sink-engine": "doctor"}


def probe_keys(context) -> list[str]:
    """The probe key under each topic the connector's objects are written under (its RegexRouters applied)."""
    config = context.config
    source = config["topics"] or context.topics
    if source is None:
        raise Skipped("with topics.regex the topics come from Kafka, which did not list them (kafka topics)")
    route = TransformSettings.from_config(config).topic_router() or (lambda topic: topic)
    delim = config["directory.delim"]
    return [
        delim.join((config["topics.dir"], topic, PROBE_FOLDER, f"{config.name}.probe"))
        for topic in sorted({route(t) for t in source})
    ]


def write(context) -> str:
    keys = probe_keys(context)
    for key in keys:
        _put(context, key)
    return (
        f"wrote s3://{context.config['s3.bucket.name']}/{keys[0]}"
        + (f" and {len(keys) - 1} more probe(s)" if len(keys) > 1 else "")
        + f" ({_signer(context.config)})"
    )


def uploads(context) -> str:
    config, bucket = context.config, context.config["s3.bucket.name"]
    prefix = probe_keys(context)[0].rsplit(PROBE_FOLDER, 1)[0]
    try:
        listed = s3_client(S3Access.from_config(config)).list_multipart_uploads(
            Bucket=bucket, Prefix=prefix, MaxUploads=1
        )
    except ClientError as e:
        raise Failed(grants.describe(e, "s3", f"arn:aws:s3:::{bucket}", _grantor(config))) from None
    return f"listed incomplete uploads under {prefix} ({len(listed.get('Uploads', []))} shown of at most 1)"


def dead_letters(context) -> str:
    config = context.config
    key = config["directory.delim"].join(
        (config["errors.deadletterqueue.s3.prefix"].strip("/"), PROBE_FOLDER, f"{config.name}.probe")
    )
    body = _put(context, key)
    bucket = config["s3.bucket.name"]
    try:
        read = s3_client(S3Access.from_config(config)).get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as e:
        raise Failed(
            grants.describe(e, "s3", f"arn:aws:s3:::{bucket}/{key}", _grantor(config), sid="ReadOwnDeadLetters")
        ) from None
    if read != body:
        raise Failed(f"s3://{bucket}/{key} read back other bytes than were written")
    return f"wrote and read back s3://{bucket}/{key}"


def _put(context, key: str) -> bytes:
    config, bucket = context.config, context.config["s3.bucket.name"]
    body = (
        f'{{"connector": "{config.name}", "doctor_at": "{datetime.datetime.now(datetime.UTC).isoformat()}"}}\n'
    ).encode()
    options = ObjectOptions.from_config(config)
    try:
        s3_client(S3Access.from_config(config)).put_object(
            Bucket=bucket, Key=key, Body=body, **options.create_args(PROBE_TAGS)
        )
    except ClientError as e:
        if grants.error_code(e) == "NoSuchBucket":
            raise Failed(f"bucket {bucket} does not exist (s3.bucket.name)") from None
        if grants.error_code(e).startswith("KMS"):
            kms = grants.grant_hint("kms:GenerateDataKey", config["s3.sse.kms.key.id"])
            raise Failed(f"{grants.describe(e, 's3')}; {kms} (s3.sse.kms.key.id)") from None
        raise Failed(grants.describe(e, "s3", f"arn:aws:s3:::{bucket}/{key}", _grantor(config))) from None
    return body


def _grantor(config) -> str | None:
    role = config["s3.credentials.provider.sts.role.arn"]
    if config["s3.credentials.provider.class"] != "assumerole" or not role:
        return None
    return f"the role the S3 client assumes ({role}, s3.credentials.provider.sts.role.arn)"


def _signer(config) -> str:
    grantor = _grantor(config)
    return f"signed as {grantor}" if grantor else f"credentials: {config['s3.credentials.provider.class']}"


# the S3 objects target's (target/s3_objects.py)
OBJECT_CHECKS = (Check("s3 write", write, service="s3"), Check("s3 incomplete uploads", uploads, service="s3"))
CHECKS = (
    Check(
        "s3 dead letters",
        dead_letters,
        service="s3",
        applies=lambda config: bool(config["errors.deadletterqueue.s3.prefix"]),
    ),
)
