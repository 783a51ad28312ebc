"""ObjectStream: the bytes of one object, uploaded while the file is still being written.

Formats write into it like a binary file. Up to `s3.part.size` bytes stay in memory; past that a multipart
upload starts and every full part is queued on the uploader, so an open file holds about one part however
large it grows. `finish` sends the rest: one PutObject when the object never filled a part, else the last
part and the completion. The object appears in S3 only when finished; `abandon` drops what was sent.
"""

from __future__ import annotations

from sink_engine.storage.uploader import StreamedUpload, Uploader


class ObjectStream:
    closed = False  # read by pyarrow's file wrapper

    def __init__(self, uploader: Uploader, key: str):
        self._uploader, self.key = uploader, key
        self._part_size = uploader.options.part_size
        self._pieces: list[bytes] = []  # joined only when a part or the object is sent: one copy of each byte
        self._buffered = 0
        self._size = 0
        self._upload: StreamedUpload | None = None

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._pieces.append(bytes(data))
        self._buffered += len(data)
        self._size += len(data)
        if self._buffered > self._part_size:  # an object of exactly one part goes up in one PutObject
            buffer = memoryview(self._take())
            while len(buffer) > self._part_size:
                if self._upload is None:
                    self._upload = self._uploader.start_multipart(self.key)
                self._upload.submit_part(bytes(buffer[: self._part_size]))
                buffer = buffer[self._part_size :]
            self._pieces, self._buffered = [bytes(buffer)], len(buffer)
        return len(data)

    def _take(self) -> bytes:
        """The buffered bytes, which leave the buffer."""
        joined = self._pieces[0] if len(self._pieces) == 1 else b"".join(self._pieces)
        self._pieces, self._buffered = [], 0
        return joined

    def tell(self) -> int:
        return self._size

    @property
    def size(self) -> int:
        return self._size

    def seekable(self) -> bool:
        return False  # bytes already sent cannot be rewritten (fastavro asks)

    def flush(self) -> None:
        """Nothing to do: parts leave as soon as they are full."""

    def close(self) -> None:
        """Nothing to do: writers that close their sink do not end the object (`finish` does)."""

    def finish(self, tags: dict[str, str] | None = None) -> None:
        """Queue the rest of the object; it is in S3 once the uploader has drained."""
        rest = self._take()
        if self._upload is None:
            self._uploader.submit(self.key, rest, tags)
            return
        if rest:
            self._upload.submit_part(rest)
        self._upload.submit_complete(tags)

    def abandon(self) -> None:
        """Drop the object: nothing of it appears, and a started multipart upload is aborted."""
        self._take()
        if self._upload is not None:
            self._upload.submit_abort()
