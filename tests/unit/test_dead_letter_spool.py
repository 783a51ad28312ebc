"""Dead letters of a range are bounded in memory: the router spills them past a size and streams them back at
the commit point; the S3 destination cuts a window's object at MAX_OBJECT_SOURCE_BYTES; each letter lands once."""

from __future__ import annotations

import tracemalloc

import orjson

from sink_engine.config import parse_config
from sink_engine.dlq.letter import STAGE_VALUE_CONVERTER
from sink_engine.dlq.router import DeadLetterRouter
from sink_engine.dlq.s3_destination import S3Destination, _objects, _weight
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import ConversionError
from sink_engine.records import RecordChunk
from sink_engine.storage.uploader import Uploader
from tests.unit.test_dead_letters import letter

CONFIG = {
    "name": "c",
    "topics": "t",
    "bootstrap.servers": "k:9092",
    "s3.bucket.name": "lake",
    "s3.region": "us-east-1",
    "flush.size": 10,
    "format.class": "JsonFormat",
    "errors.tolerance": "all",
    "errors.deadletterqueue.s3.prefix": "dead",
}
VALUE = 256 * 1024


class Streamed:
    """A destination that reads the letters as they come and keeps only their offsets."""

    scan_from = None

    def __init__(self):
        self.offsets: list[int] = []

    def write(self, letters) -> None:
        self.offsets += [letter.offset for letter in letters]


def big_chunk(start: int, count: int) -> RecordChunk:
    """Records whose values are each VALUE bytes."""
    values = [bytes([offset % 251]) * VALUE for offset in range(start, start + count)]
    return RecordChunk("t", 0, list(range(start, start + count)), values, keys=[None] * count, timestamps=[0] * count)


def report_all(router: DeadLetterRouter, chunk: RecordChunk) -> None:
    for position, offset in enumerate(chunk.offsets):
        router.report(chunk, position, ConversionError("t", 0, offset, "bad"), STAGE_VALUE_CONVERTER, "c")


def test_a_range_of_many_large_dead_letters_keeps_a_bounded_part_in_memory_and_flushes_each_once():
    destination = Streamed()
    router = DeadLetterRouter(
        DeadLetterSettings.from_config(parse_config(CONFIG)), destination, memory_bytes=2 * 1024 * 1024
    )
    tracemalloc.start()
    try:
        for start in range(0, 200, 8):  # 50 MiB of dead letters, read 2 MiB at a time
            report_all(router, big_chunk(start, 8))
            assert router._letters.in_memory <= 9
        assert len(router._letters) == 200
        counts, _ = router.flush(150)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 1024 * 1024
    assert counts == {"ConversionError": 150} and destination.offsets == list(range(150))
    assert [letter.offset for letter in router._letters] == list(range(150, 200))  # past the commit point: kept
    assert router.flush(150) == ({}, None)
    assert router.flush(200)[0] == {"ConversionError": 50} and destination.offsets == list(range(200))
    assert len(router._letters) == 0


def test_spilled_letters_come_back_as_they_were_reported():
    router = DeadLetterRouter(DeadLetterSettings.from_config(parse_config(CONFIG)), Streamed(), memory_bytes=1)
    chunk = RecordChunk("t", 0, [3, 4], [b"\x00\xff", None], keys=[b"k", None], timestamps=[7, 8])
    chunk.headers = [[("h", b"v")], []]
    report_all(router, chunk)
    assert router._letters.in_memory == 0
    [first, second] = list(router._letters)
    assert (first.offset, first.key, first.value, first.headers, first.timestamp) == (
        3,
        b"k",
        b"\x00\xff",
        (("h", b"v"),),
        7,
    )
    assert (second.offset, second.value) == (4, None)


def test_an_s3_window_is_cut_by_size_where_a_shorter_attempt_cut_it():
    letters = [letter(offset, value=b"x" * (offset % 7) * 100) for offset in range(0, 300, 3)]
    bound = 5 * _weight(letters[0])
    cuts = [[letter.offset for letter in group] for group in _objects(letters, bound)]
    assert len(cuts) > 5 and [offset for group in cuts for offset in group] == [letter.offset for letter in letters]
    assert all(sum(_weight(letter) for letter in group) <= bound for group in _objects(letters, bound))
    # the error text does not move a cut (stack traces name files that may be elsewhere on another executor)
    other = [letter(offset, value=b"x" * (offset % 7) * 100, stacktrace="t" * offset) for offset in range(0, 300, 3)]
    assert [[letter.offset for letter in group] for group in _objects(other, bound)] == cuts
    for end in range(1, len(letters)):  # a prefix of the letters is cut where the whole was
        shorter = [[letter.offset for letter in group] for group in _objects(letters[:end], bound)]
        assert shorter[:-1] == cuts[: len(shorter) - 1] and cuts[len(shorter) - 1][: len(shorter[-1])] == shorter[-1]


def test_s3_objects_cut_by_size_hold_each_letter_once_across_a_rerun(moto_s3, monkeypatch):
    monkeypatch.setattr("sink_engine.dlq.s3_destination.MAX_OBJECT_SOURCE_BYTES", 5000)
    settings = DeadLetterSettings.from_config(parse_config(CONFIG))
    letters = [letter(offset, topic="t", partition=0, value=b"v" * 500) for offset in range(0, 40, 2)]
    for seen in (7, 20, 13):  # a crashed attempt, a rerun that saw more, a zombie that saw fewer
        uploader = Uploader(moto_s3, "lake")
        try:
            S3Destination.from_settings(settings, uploader).write(iter(letters[:seen]))
            uploader.drain()
        finally:
            uploader.close()
    keys = [o["Key"] for o in moto_s3.list_objects_v2(Bucket="lake", Prefix="dead/")["Contents"]]
    offsets = [
        orjson.loads(line)["offset"]
        for key in sorted(keys)
        for line in moto_s3.get_object(Bucket="lake", Key=key)["Body"].read().splitlines()
    ]
    assert len(keys) > 2 and offsets == [letter.offset for letter in letters]
