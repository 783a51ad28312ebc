"""Uploads objects on a small thread pool so that reading Kafka and uploading overlap."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.s3 import put_object


class Uploader:
    def __init__(self, client, bucket: str, options: ObjectOptions | None = None, threads: int = 4):
        self._client, self._bucket, self._options = client, bucket, options or ObjectOptions()
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="upload")
        self._pending: list[Future] = []

    def submit(self, key: str, body: bytes, tags: dict[str, str] | None = None) -> None:
        """Queue an upload; `tags` are applied when `s3.object.tagging` is on."""
        self._pending.append(self._pool.submit(put_object, self._client, self._bucket, key, body, self._options,
                                               tags))

    def drain(self) -> None:
        """Wait for every submitted upload; raises the first StorageError after all have finished."""
        pending, self._pending = self._pending, []
        errors = [f.exception() for f in pending if f.exception() is not None]
        if errors:
            raise errors[0]

    def close(self) -> None:
        self._pool.shutdown(wait=True)
