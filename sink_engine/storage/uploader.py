"""Uploads objects on a small thread pool so that reading Kafka and uploading overlap.

Submissions wait while `threads + 1` uploads are queued or running, so the bytes in flight stay bounded
(at most that many parts or objects; every thread stays busy). Completing or aborting a multipart upload is queued
after its parts: the pool runs tasks in submission order, so the parts a completion waits for are already running or
done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import S3Client
from sink_engine.errors import StorageError
from sink_engine.storage.multipart import MultipartUpload
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import put_object


class Uploader:
    def __init__(self, client: S3Client, bucket: str, options: ObjectOptions | None = None, threads: int = 4) -> None:
        self._client, self._bucket, self.options = client, bucket, options or ObjectOptions()
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="upload")
        self._slots = threading.Semaphore(threads + 1)
        self._pending: list[Future] = []

    def submit(self, key: str, body: bytes, tags: dict[str, str] | None = None) -> None:
        """Queue an upload of a whole object; `tags` are applied when `s3.object.tagging` is on."""
        self._queue(put_object, self._client, self._bucket, key, body, self.options, tags)

    def submit_call(self, function: Callable[..., object], *args: object) -> None:
        """Queue `function(client, bucket, options, *args)`, an upload step of the caller's own (it raises
        StorageError; `drain` raises it)."""
        self._queue(function, self._client, self._bucket, self.options, *args)

    def start_multipart(self, key: str) -> StreamedUpload:
        """Create a multipart upload for an object written piece by piece (see ObjectStream)."""
        try:
            upload = MultipartUpload(self._client, self._bucket, key, self.options, self.options.create_args(None))
        except (ClientError, BotoCoreError) as e:
            raise StorageError(f"multipart upload of s3://{self._bucket}/{key} could not start: {e}") from e
        return StreamedUpload(self, upload)

    @property
    def busy(self) -> bool:
        """Whether a submitted upload has not finished yet."""
        return any(not f.done() for f in self._pending)

    def drain(self) -> None:
        """Wait for every submitted upload; raises the first StorageError after all have finished."""
        pending, self._pending = self._pending, []
        errors = [error for f in pending if (error := f.exception()) is not None]
        if errors:
            raise errors[0]

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _queue(self, function: Callable[..., object], *args: object) -> Future:
        self._slots.acquire()
        future = self._pool.submit(function, *args)
        future.add_done_callback(lambda _: self._slots.release())
        self._pending.append(future)
        return future


class StreamedUpload:
    """A multipart upload whose parts are queued on the uploader as they fill, then completed or aborted."""

    def __init__(self, uploader: Uploader, upload: MultipartUpload):
        self._uploader, self._upload = uploader, upload
        self._parts: list[Future] = []

    def submit_part(self, body: bytes) -> None:
        number = len(self._parts) + 1
        self._parts.append(self._uploader._queue(self._call, self._upload.upload_part, number, body))

    def submit_complete(self, tags: dict[str, str] | None) -> None:
        """Queue the completion (and tags, with `s3.object.tagging`); a failed part aborts the upload instead, and
        so does a completion that fails for good."""
        tags = tags if self._uploader.options.tagging else None
        self._uploader._queue(self._complete, tags)

    def submit_abort(self) -> None:
        """Queue an abort that runs once the parts in flight have finished."""
        self._uploader._queue(self._abort)

    def _complete(self, tags: dict[str, str] | None) -> None:
        wait(self._parts)
        failed = [error for f in self._parts if (error := f.exception()) is not None]
        if failed:
            self._upload.abort()
            raise failed[0]
        try:
            self._call(self._upload.complete, tags)
        except StorageError:
            self._upload.abort()  # after a completed upload whose tagging failed, the abort finds nothing to drop
            raise

    def _abort(self) -> None:
        wait(self._parts)
        self._upload.abort()

    def _call(self, step: Callable[..., object], *args: object) -> None:
        try:
            step(*args)
        except (ClientError, BotoCoreError) as e:
            raise StorageError(f"multipart upload of s3://{self._upload.bucket}/{self._upload.key} failed: {e}") from e
