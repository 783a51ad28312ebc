"""One S3 multipart upload: create, parts (each retried on its own), complete or abort."""

from __future__ import annotations

import logging
import threading

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine import events
from sink_engine.aws_types import S3Client
from sink_engine.storage.object_options import ObjectOptions


def part_bounds(size: int, part_size: int) -> list[tuple[int, int]]:
    """[start, stop) byte ranges of the parts: all of `part_size` but the last."""
    return [(start, min(start + part_size, size)) for start in range(0, size, part_size)]


class MultipartUpload:
    """Created on construction (CreateMultipartUpload, retried). Parts may be uploaded from several threads;
    `complete` assembles them in part-number order. Raises botocore errors after the retries."""

    def __init__(self, client: S3Client, bucket: str, key: str, options: ObjectOptions, create_args: dict) -> None:
        self._client, self.bucket, self.key, self._retry = client, bucket, key, options.retry
        answer = self._retry.call(lambda: client.create_multipart_upload(Bucket=bucket, Key=key, **create_args))
        self.upload_id = answer["UploadId"]
        self._etags: dict[int, str] = {}
        self._lock = threading.Lock()

    def upload_part(self, number: int, body: bytes) -> None:
        answer = self._retry.call(
            lambda: self._client.upload_part(
                Bucket=self.bucket, Key=self.key, UploadId=self.upload_id, PartNumber=number, Body=body
            )
        )
        with self._lock:
            self._etags[number] = answer["ETag"]

    def complete(self, tags: dict[str, str] | None = None) -> None:
        """Assemble the parts into the object; `tags` (known only now) are put on it afterwards. Then the key's
        stray uploads are aborted (see `_strays`)."""
        parts = [{"PartNumber": n, "ETag": etag} for n, etag in sorted(self._etags.items())]
        strays = self._strays()
        self._retry.call(
            lambda: self._client.complete_multipart_upload(
                Bucket=self.bucket, Key=self.key, UploadId=self.upload_id, MultipartUpload={"Parts": parts}
            )
        )
        if tags:
            tag_set = [{"Key": k, "Value": v} for k, v in tags.items()]
            self._retry.call(
                lambda: self._client.put_object_tagging(Bucket=self.bucket, Key=self.key, Tagging={"TagSet": tag_set})
            )
        for upload_id in strays:
            self._abort(upload_id)

    def _strays(self) -> list[str]:
        """The ids of the key's other incomplete uploads started no later than this one (S3's clock): a Create
        whose answer was lost (an upload the run never learned of), or the upload of an attempt that crashed or
        met an outage while aborting; once this one completes, the object holds the bytes they were writing.
        Listed before the completion, while this upload is still listed. Best effort: what cannot be listed (S3
        refused it: AccessDenied without s3:ListBucketMultipartUploads, or an outage past the retries) is left to
        the bucket's lifecycle rule for incomplete uploads, with a MULTIPART_CLEANUP_FAILED warning."""
        try:
            listed = self._retry.call(lambda: self._client.list_multipart_uploads(Bucket=self.bucket, Prefix=self.key))
        except (ClientError, BotoCoreError) as e:
            self._cleanup_failed("list", e, prefix=self.key)
            return []
        uploads = [u for u in listed.get("Uploads", []) if u["Key"] == self.key]
        mine = [u["Initiated"] for u in uploads if u["UploadId"] == self.upload_id]
        return [
            u["UploadId"] for u in uploads if mine and u["UploadId"] != self.upload_id and u["Initiated"] <= mine[0]
        ]

    def abort(self) -> None:
        """Drop the parts (retried like the other steps; a retry that finds the upload gone met its own first
        try). An abort that fails for good is left to the bucket's lifecycle rule for incomplete uploads, with a
        MULTIPART_CLEANUP_FAILED warning."""
        self._abort(self.upload_id)

    def _abort(self, upload_id: str) -> None:
        try:
            self._retry.call(
                lambda: self._client.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=upload_id)
            )
        except (ClientError, BotoCoreError) as e:
            self._cleanup_failed("abort", e, upload_id=upload_id)

    def _cleanup_failed(self, step: str, error: Exception, **fields: object) -> None:
        """A clean-up S3 refused, which the upload itself survives: a WARNING event naming the bucket, the key, the
        step (`list` or `abort`) and S3's error code (the exception's class for an error without an answer)."""
        code = error.response["Error"]["Code"] if isinstance(error, ClientError) else type(error).__name__
        events.emit(
            events.MULTIPART_CLEANUP_FAILED,
            level=logging.WARNING,
            bucket=self.bucket,
            key=self.key,
            step=step,
            error_code=code,
            error=str(error),
            **fields,
        )


def upload_in_parts(
    client: S3Client, bucket: str, key: str, body: bytes, options: ObjectOptions, create_args: dict
) -> None:
    """Upload a whole body in parts of `s3.part.size`, on this thread; aborted when any step fails for good."""
    upload = MultipartUpload(client, bucket, key, options, create_args)
    try:
        view = memoryview(body)
        for number, (start, stop) in enumerate(part_bounds(len(body), options.part_size), start=1):
            upload.upload_part(number, bytes(view[start:stop]))
        upload.complete()
    except (ClientError, BotoCoreError):
        upload.abort()
        raise
