"""Dead letters as JSON-lines objects under `errors.deadletterqueue.s3.prefix`, written once and never changed.

Key: `<prefix>/<topic>/partition=<p>/<topic>+<p>+<first offset, padded>.json`, one object per window of
WINDOW_OFFSETS source offsets and run: the dead letters of one window that a run writes start at the first
bad record at or after the run's start, which a rerun from the same committed offset finds again. A window whose
letters pass MAX_OBJECT_SOURCE_BYTES goes on in a next object keyed by its first letter past the bound, so that a
body stays bounded whatever the size of the records. Where a window is cut depends only on the source records of
the letters before the cut (their Kafka key, value and headers: not the error text, whose stack trace names files
that may be elsewhere on another executor), so a rerun from the same committed offset cuts its letters where an
attempt that saw fewer or more of them did. Objects are
created with `If-None-Match: *` (PutObject fails with 412 when the key exists). A rerun that meets an object
already there (a crashed attempt of the same range, a zombie that lost its lease, or its own first try whose
answer was lost) reads its source offsets: when they are the first of this run's dead letters, the rest goes
into a new object keyed by the first one missing; when they include all of this run's, nothing is written.
So a committed dead letter is never overwritten by an attempt that saw fewer records, and the objects of a
topic-partition hold disjoint offsets. A later run starts past the commit point and writes other keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson
from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.aws_types import S3Client
from sink_engine.dlq.letter import DeadLetter
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import StorageError
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.object_options import ObjectOptions
from sink_engine.storage.uploader import Uploader

WINDOW_OFFSETS = 10_000
# A window's object is cut before a letter that would take its source bytes (`_weight`) past this: a body then
# holds at most 4/3 of it (base64) plus the letters' errors.
MAX_OBJECT_SOURCE_BYTES = 8 * 1024 * 1024
LETTER_WEIGHT = 1024  # counted for each letter beyond its source bytes (bounds how many small letters an object has)


class S3Destination:
    scan_from: int | None = None  # no position to store with the commit (router.Destination)

    def __init__(self, naming: ObjectNaming, uploader: Uploader) -> None:
        self._naming, self._uploader = naming, uploader

    @classmethod
    def from_settings(cls, settings: DeadLetterSettings, uploader: Uploader) -> S3Destination:
        assert settings.s3_prefix is not None  # the S3 destination's settings
        naming = ObjectNaming(
            settings.s3_prefix.strip("/"), settings.directory_delim, settings.file_delim, settings.offset_pad_width
        )
        return cls(naming, uploader)

    def write(self, letters: Iterable[DeadLetter]) -> None:
        """Submit each object's letters to the task's uploader as they are read (the uploader bounds the uploads
        queued); the task drains it before it returns."""
        for group in _objects(letters):
            self._uploader.submit_call(self._write_once, group)

    def objects(self, letters: Iterable[DeadLetter]) -> list[tuple[str, bytes]]:
        """(key, JSON-lines body) per window of WINDOW_OFFSETS offsets (cut at MAX_OBJECT_SOURCE_BYTES), keyed by its
        first dead letter: the objects a run writes where no attempt of its range wrote before."""
        return [(self._key(group[0]), _body(group)) for group in _objects(letters)]

    def _write_once(self, client: S3Client, bucket: str, options: ObjectOptions, letters: list[DeadLetter]) -> None:
        """Create the window's object, or go on after the one an earlier attempt created (see the module)."""
        while letters:
            key = self._key(letters[0])
            if _create(client, bucket, key, _body(letters), options):
                return
            held = _source_offsets(client, bucket, key, options)
            ours = [letter.offset for letter in letters]
            if held[: len(ours)] == ours:
                return  # every one of ours is there already
            if ours[: len(held)] != held:
                raise StorageError(
                    f"dead-letter object s3://{bucket}/{key} holds source offsets {held[0]}..{held[-1]} "
                    f"({len(held)}) that are not those of this run's dead letters from offset {ours[0]}: was the "
                    "connector's config changed between a failed run and its rerun? The object is kept as it is"
                )
            letters = letters[len(held) :]

    def _key(self, first: DeadLetter) -> str:
        return self._naming.key(first.topic, f"partition={first.partition}", first.partition, first.offset, ".json")


def _window(letter: DeadLetter) -> int:
    return letter.offset // WINDOW_OFFSETS


def _objects(letters: Iterable[DeadLetter], max_bytes: int | None = None) -> Iterator[list[DeadLetter]]:
    """The letters of each object in offset order: a new one at each window, and before a letter that would take
    the object's `_weight` past `max_bytes` (MAX_OBJECT_SOURCE_BYTES); an object holds at least one letter."""
    bound = MAX_OBJECT_SOURCE_BYTES if max_bytes is None else max_bytes
    group: list[DeadLetter] = []
    size = 0
    for letter in letters:
        weight = _weight(letter)
        if group and (_window(letter) != _window(group[0]) or size + weight > bound):
            yield group
            group, size = [], 0
        group.append(letter)
        size += weight
    if group:
        yield group


def _weight(letter: DeadLetter) -> int:
    """The bytes of a letter's source record (key, value, headers) and LETTER_WEIGHT: the same in every attempt."""
    headers = sum(len(name) + len(value or b"") for name, value in letter.headers)
    return len(letter.key or b"") + len(letter.value or b"") + headers + LETTER_WEIGHT


def _body(letters: list[DeadLetter]) -> bytes:
    return b"".join(letter.to_json_line() for letter in letters)


def _create(client: S3Client, bucket: str, key: str, body: bytes, options: ObjectOptions) -> bool:
    """PutObject only if the key is free: True when created, False when an object is there (possibly this
    call's own first try, whose answer was lost)."""
    try:
        options.retry.call(
            lambda: client.put_object(Bucket=bucket, Key=key, Body=body, IfNoneMatch="*", **options.create_args(None))
        )
        return True
    except ClientError as e:
        if e.response["Error"]["Code"] == "PreconditionFailed":
            return False
        raise StorageError(f"dead-letter upload of s3://{bucket}/{key} failed: {e}") from e
    except BotoCoreError as e:
        raise StorageError(f"dead-letter upload of s3://{bucket}/{key} failed: {e}") from e


def _source_offsets(client: S3Client, bucket: str, key: str, options: ObjectOptions) -> list[int]:
    """The source offsets of the dead letters in an existing object, in its order."""
    try:
        body = options.retry.call(lambda: client.get_object(Bucket=bucket, Key=key)["Body"].read())
    except (ClientError, BotoCoreError) as e:
        raise StorageError(f"cannot read the existing dead-letter object s3://{bucket}/{key}: {e}") from e
    return [orjson.loads(line)["offset"] for line in body.splitlines()]
