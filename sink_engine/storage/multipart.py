"""Multipart upload of one object in parts of `s3.part.size`; an upload that fails is aborted."""
from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.storage.object_options import ObjectOptions


def part_bounds(size: int, part_size: int) -> list[tuple[int, int]]:
    """[start, stop) byte ranges of the parts: all of `part_size` but the last."""
    return [(start, min(start + part_size, size)) for start in range(0, size, part_size)]


def upload_in_parts(client, bucket: str, key: str, body: bytes, options: ObjectOptions, create_args: dict) -> None:
    """Create, upload every part (each retried on its own), complete; abort when any step fails for good."""
    retry = options.retry
    upload_id = retry.call(lambda: client.create_multipart_upload(Bucket=bucket, Key=key, **create_args))["UploadId"]
    try:
        view = memoryview(body)
        parts = []
        for number, (start, stop) in enumerate(part_bounds(len(body), options.part_size), start=1):
            answer = retry.call(lambda: client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id,
                                                           PartNumber=number, Body=bytes(view[start:stop])))
            parts.append({"PartNumber": number, "ETag": answer["ETag"]})
        retry.call(lambda: client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                                            MultipartUpload={"Parts": parts}))
    except (ClientError, BotoCoreError):
        _abort(client, bucket, key, upload_id)
        raise


def _abort(client, bucket: str, key: str, upload_id: str) -> None:
    try:
        client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except (ClientError, BotoCoreError):
        pass  # the bucket's lifecycle rule for incomplete uploads cleans up what is left
