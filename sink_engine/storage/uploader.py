"""Uploads objects on a small thread pool so that reading Kafka and uploading overlap."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from sink_engine.storage.s3 import put_object


class Uploader:
    def __init__(self, client, bucket: str, threads: int = 4):
        self._client, self._bucket = client, bucket
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="upload")
        self._pending: list[Future] = []

    def submit(self, key: str, body: bytes) -> None:
        self._pending.append(self._pool.submit(put_object, self._client, self._bucket, key, body))

    def drain(self) -> None:
        """Wait for every submitted upload; raises the first StorageError after all have finished."""
        pending, self._pending = self._pending, []
        errors = [f.exception() for f in pending if f.exception() is not None]
        if errors:
            raise errors[0]

    def close(self) -> None:
        self._pool.shutdown(wait=True)
