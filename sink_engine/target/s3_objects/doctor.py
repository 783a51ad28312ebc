"""The doctor's checks of the S3 objects target: the job may write under each topic's folder (a probe object at a
fixed key, sink_engine/doctor/s3.py says why) and list its incomplete uploads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from sink_engine.doctor import grants
from sink_engine.doctor.checks import Check, Failed, Skipped
from sink_engine.doctor.s3 import PROBE_FOLDER, grantor, put_probe, signer
from sink_engine.storage.s3 import s3_client
from sink_engine.transform.settings import TransformSettings

if TYPE_CHECKING:
    from sink_engine.doctor.runner import Context


def probe_keys(context: Context) -> list[str]:
    """The probe key under each topic the connector's objects are written under (its RegexRouters applied)."""
    settings = context.settings
    source = settings.source.topics or context.topics
    if source is None:
        raise Skipped("with topics.regex the topics come from Kafka, which did not list them (kafka topics)")
    route = TransformSettings.from_config(context.config).topic_router() or (lambda topic: topic)
    naming = settings.naming
    return [
        naming.directory_delim.join((naming.topics_dir, topic, PROBE_FOLDER, f"{settings.run.connector}.probe"))
        for topic in sorted({route(t) for t in source})
    ]


def write(context: Context) -> str:
    keys = probe_keys(context)
    for key in keys:
        put_probe(context, key)
    return (
        f"wrote s3://{context.settings.run.bucket}/{keys[0]}"
        + (f" and {len(keys) - 1} more probe(s)" if len(keys) > 1 else "")
        + f" ({signer(context.settings)})"
    )


def uploads(context: Context) -> str:
    settings = context.settings
    bucket = settings.run.bucket
    prefix = probe_keys(context)[0].rsplit(PROBE_FOLDER, 1)[0]
    try:
        listed = s3_client(settings.s3).list_multipart_uploads(Bucket=bucket, Prefix=prefix, MaxUploads=1)
    except ClientError as e:
        raise Failed(grants.describe(e, "s3", f"arn:aws:s3:::{bucket}", grantor(settings))) from None
    return f"listed incomplete uploads under {prefix} ({len(listed.get('Uploads', []))} shown of at most 1)"


CHECKS = (Check("s3 write", write, service="s3"), Check("s3 incomplete uploads", uploads, service="s3"))
