"""The restore's pieces without a broker: envelope objects read back (every timestamp type), what is produced for
a record (LogAppendTime kept as CreateTime's value), header values from sidecars, the merge of overlapping
objects, the original offsets found in a target, the options' parsing."""

from __future__ import annotations

import base64
import io
import re

import pytest

from sink_engine.errors import ConfigError
from sink_engine.format.envelope_format import EnvelopeFormat
from sink_engine.format.envelope_schema import envelope_column
from sink_engine.offsets import LeaseKeeper
from sink_engine.restore import engine
from sink_engine.restore.lease import MAX_CHECKPOINT_BYTES, Checkpoint, _item_bytes
from sink_engine.restore.objects import ObjectReader
from sink_engine.restore.present import Present
from sink_engine.restore.progress import PartitionCounts, RestoreBoard, render
from sink_engine.restore.request import RestoreRequest, parse_partitions, parse_time
from sink_engine.restore.selection import PartitionPlan, selected, without_present
from sink_engine.restore.settings import RestoreSettings
from sink_engine.restore.sidecar_values import header_value
from sink_engine.restore.stored import ORIGIN_HEADER, StoredRecord, origin_of
from sink_engine.target.s3_objects.verify.listing import StoredObject
from sink_engine.validation import parse_checked_config
from tests.unit.test_envelope_format import CONTEXT, MESSAGES, TYPES, chunk_of


class Bucket:
    """A stand-in for an S3 client's get_object over a dict of key -> bytes."""

    class exceptions:
        NoSuchKey = KeyError

    def __init__(self, objects: dict):
        self.objects = objects

    def get_object(self, Bucket, Key):
        return {"Body": io.BytesIO(self.objects[Key])}


def config(**overrides):
    raw = {
        "topics": "orders",
        "bootstrap.servers": "localhost:9092",
        "s3.bucket.name": "lake",
        "s3.region": "us-east-1",
        "flush.size": 10,
        "format.class": "EnvelopeFormat",
        "offset.storage.dynamodb.table": "t",
        **overrides,
    }
    return parse_checked_config({"name": "c", "config": raw})


ENCODINGS = {"parquet": {}, "avro": {"avro.codec": "deflate"}, "json": {"s3.compression.type": "gzip"}}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_envelope_rows_read_back_with_every_timestamp_type(encoding):
    # given an envelope object of records stamped CreateTime, LogAppendTime and NoTimestampType
    settings = RestoreSettings.from_config(config(**{"format.envelope.encoding": encoding, **ENCODINGS[encoding]}))
    fmt = EnvelopeFormat(encoding, avro_codec="deflate", compression="gzip" if encoding == "json" else "none")
    key = f"topics/orders/partition=3/orders+3+0000000040{settings.extension}"
    body = fmt.encode(envelope_column(chunk_of(MESSAGES)), CONTEXT).body
    # when a restore reads it
    records = ObjectReader(Bucket({key: body}), settings).records(StoredObject(key, "orders", 3, 40, len(body)))
    # then each record comes back whole, its timestamp and type as stored
    assert records == [
        StoredRecord(3, 40 + i, None if stamp == -1 else stamp, TYPES[kind], k, v, headers or [])
        for i, (k, v, headers, (kind, stamp)) in enumerate(MESSAGES)
    ]


class FakeProducer:
    def __init__(self):
        self.produced = []

    def produce(self, topic, **kwargs):
        self.produced.append(kwargs)

    def flush(self, timeout):
        return 0

    def __len__(self):
        return 0


def just_acquired(lease_ms: int) -> engine._HeldLease:
    """A restore lease acquired now and not renewed yet (its keeper not started): held for `lease_ms`."""
    return engine._HeldLease(LeaseKeeper(None, None, lease_ms), "restore#restored", lease_ms)


def test_a_log_append_time_record_is_produced_with_its_time_as_create_time(monkeypatch):
    # given envelope rows stamped LogAppendTime and NoTimestampType
    fake = FakeProducer()
    monkeypatch.setattr(engine.kafka, "producer", lambda *args: fake)
    sender = engine._Sender(None, "restored", "orders", just_acquired(60_000), lambda ends: None)
    # when they are sent
    sender.send(StoredRecord(3, 41, 1_700_000_000_005, "LogAppendTime", None, b"v", [("h", b"\xff")]), 3)
    sender.send(StoredRecord(3, 44, None, "NoTimestampType", b"k", None, []), -1)
    sender.confirm()
    # then the first carries its LogAppendTime (a producer can only set CreateTime), the second none (0: the
    # producer stamps it), each its headers then the origin header
    assert [(p["timestamp"], p["partition"], p["key"], p["value"]) for p in fake.produced] == [
        (1_700_000_000_005, 3, None, b"v"),
        (0, -1, b"k", None),
    ]
    assert fake.produced[0]["headers"][:-1] == [("h", b"\xff")]
    assert [origin_of(p["headers"]) for p in fake.produced] == [("orders", 3, 41), ("orders", 3, 44)]


def test_a_record_of_create_time_0_is_counted_as_restamped(monkeypatch):
    # librdkafka takes a timestamp of 0 for none and stamps the produce time (rd_kafka_msg_new0): a record of
    # CreateTime 0 cannot be restored as such, and the restore says how many there were
    fake = FakeProducer()
    monkeypatch.setattr(engine.kafka, "producer", lambda *args: fake)
    sender = engine._Sender(None, "restored", "orders", just_acquired(60_000), lambda ends: None)
    for offset, stamp in ((1, 0), (2, None), (3, 5), (4, 0)):
        sender.send(
            StoredRecord(0, offset, stamp, "CreateTime" if stamp is not None else "NoTimestampType", None, b"v", []), 0
        )
    sender.confirm()
    assert [p["timestamp"] for p in fake.produced] == [0, 0, 5, 0]
    assert sender.restamped == 2


def test_the_last_origin_header_is_the_restores_own():
    headers = [
        (ORIGIN_HEADER, b'{"topic":"old","partition":0,"offset":1}'),
        (ORIGIN_HEADER, b'{"topic":"orders","partition":2,"offset":9}'),
    ]
    assert origin_of(headers) == ("orders", 2, 9)
    assert origin_of([("x", b"1")]) is None and origin_of([(ORIGIN_HEADER, b"not json")]) is None


@pytest.mark.parametrize(
    "text, binary, restored",
    [
        (None, True, None),
        ("", True, b""),
        ("plain text", True, b"plain text"),  # not base64
        (base64.b64encode(b"\xff\x00\x10").decode(), True, b"\xff\x00\x10"),  # written as base64: not UTF-8
        (
            "abcd",
            True,
            base64.b64decode("abcd"),
        ),  # the ambiguity: text of a binary header that spells base64 of non-UTF-8
        ("dHJ1ZQ==", True, b"dHJ1ZQ=="),  # base64 of b"true": valid UTF-8, so the sink would have written "true"
        ("/wA=", False, b"/wA="),  # a header not named binary: its text, always
        ("abcd", False, b"abcd"),
    ],
)
def test_header_values_from_sidecars(text, binary, restored):
    assert header_value(text, binary) == restored


def object_of(offsets: list[int]) -> StoredObject:
    return StoredObject(f"o{offsets[0]}-{len(offsets)}", "orders", 0, offsets[0], 1)


class Objects:
    """An ObjectReader stand-in: each object's records, and the order objects were read in."""

    def __init__(self, contents: dict):
        self.contents, self.read = contents, []

    def records(self, obj):
        self.read.append(obj.key)
        return [StoredRecord(0, o, 1000 + o, "CreateTime", None, b"%d" % o, []) for o in self.contents[obj.key]]


def test_overlapping_objects_are_merged_by_offset_each_offset_once_below_the_commit():
    # given objects of one partition that interleave (two files open at once), one repeating an offset, and a
    # commit at 12
    contents = {"o0-4": [0, 2, 4, 6], "o1-3": [1, 3, 5], "o7-3": [7, 8, 9], "o5-1": [5], "o10-3": [10, 11, 12]}
    objects = sorted((object_of(v) for v in contents.values()), key=lambda o: o.start_offset)
    reader = Objects(contents)
    request = RestoreRequest(config(), "orders", "restored", from_offset=2)
    # when the partition's records are selected from offset 2
    found = [r.offset for r in selected(request, PartitionPlan(0, tuple(objects), 12), reader)]
    # then they come in offset order, each once, none at or past the commit
    assert found == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    # and an object was opened only once the records before its first offset were out
    assert reader.read == ["o0-4", "o1-3", "o5-1", "o7-3", "o10-3"]


def test_a_time_range_selects_by_record_timestamp():
    contents = {"o0-5": [0, 1, 2, 3, 4]}
    request = RestoreRequest(config(), "orders", "restored", from_time=1001, to_time=1003)
    plan = PartitionPlan(0, (object_of(contents["o0-5"]),), 100)
    assert [r.offset for r in selected(request, plan, Objects(contents))] == [1, 2, 3]


@pytest.mark.parametrize(
    "added, intervals",
    [
        ([5, 6, 7, 9, 10, 3, 8], [(3, 3), (5, 10)]),  # in order, then below: merged where adjacent
        ([1, 1, 2, 2, 0], [(0, 2)]),  # repeats change nothing
        ([10, 20, 30, 15, 25, 11, 19], [(10, 11), (15, 15), (19, 20), (25, 25), (30, 30)]),
        ([(0, 4), (10, 14), (5, 9)], [(0, 14)]),  # a range bridging two
        ([(0, 4), (10, 14), (3, 11)], [(0, 14)]),  # a range overlapping two
        ([(5, 9), (0, 20), (30, 31)], [(0, 20), (30, 31)]),  # a range covering one
    ],
)
def test_present_offsets_are_kept_as_merged_intervals(added, intervals):
    # given offsets and ranges added in any order
    present = Present()
    for item in added:
        present.add_range(*item) if isinstance(item, tuple) else present.add(item)
    # then they are disjoint intervals, adjacent ones merged, each offset in them present and no other
    assert present.intervals() == intervals
    covered = {o for s, e in intervals for o in range(s, e + 1)}
    assert {o for o in range(40) if o in present} == covered
    # and the checkpoint's text gives them back
    assert Present.from_text(present.text()).intervals() == intervals


def test_present_of_scanned_offsets_out_of_order():
    # given a source partition's offsets as a scan through the partitioner meets them (spread over target partitions)
    offsets = [o for stride in range(3) for o in range(stride, 3000, 3)] + [7, 7]
    # then they make one interval
    assert Present.of(offsets).intervals() == [(0, 2999)]


def test_the_checkpoint_of_thousands_of_partitions_stays_under_the_bound():
    # given 4,096 target partitions at 10-digit offsets and 4,096 source partitions of 2 intervals each
    present = {p: Present([(1_000_000_000 + i * 10, 1_000_000_005 + i * 10) for i in range(2)]) for p in range(4096)}
    attributes = Checkpoint({p: 9_999_999_999 for p in range(4096)}, present).attributes()
    # then the estimate bounds DynamoDB's size rule and stays under the limit the checkpoint keeps to
    assert _item_bytes(attributes) < MAX_CHECKPOINT_BYTES < 400 * 1024
    # and a checkpoint of one interval per offset would not fit
    scattered = Checkpoint({0: 1}, {0: Present((o, o) for o in range(1_000_000_000, 1_000_100_000, 2))}).attributes()
    assert _item_bytes(scattered) > MAX_CHECKPOINT_BYTES


@pytest.mark.parametrize(
    "options, one_stream, read, known",
    [
        ({}, True, ["o20-10", "o30-5"], 20),  # the first two objects' offsets are all present
        ({"from_offset": 5}, True, ["o20-10", "o30-5"], 15),  # only the selected offsets count
        ({"to_offset": 14}, True, [], 15),  # the second object's selected part is present
        ({"from_time": 0}, True, ["o0-10", "o10-10", "o20-10", "o30-5"], 0),  # a time range: read to know
        ({}, False, ["o0-10", "o10-10", "o20-10", "o30-5"], 0),  # objects that may overlap: read
    ],
)
def test_objects_whose_selected_offsets_are_all_present_are_not_read(options, one_stream, read, known):
    # given one partition's objects from 0, 10, 20 and 30, a commit at 35, and offsets 0-24 present in the target
    contents = {f"o{s}-{n}": list(range(s, s + n)) for s, n in ((0, 10), (10, 10), (20, 10), (30, 5))}
    objects = tuple(object_of(v) for v in contents.values())
    request = RestoreRequest(config(), "orders", "restored", **options)
    wanted = [o for o in objects if o.start_offset <= options.get("to_offset", 99)]
    # when the objects wholly present are left out
    kept, counted = without_present(request, PartitionPlan(0, tuple(wanted), 35), Present([(0, 24)]), one_stream)
    # then only the others are read, and the left-out offsets are counted
    assert [o.key for o in kept.objects] == read
    assert counted == known
    # and the records selected from what is read are the ones not counted
    reader = Objects(contents)
    records = [r.offset for r in selected(request, kept, reader)]
    everything = [r.offset for r in selected(request, PartitionPlan(0, tuple(wanted), 35), Objects(contents))]
    assert len(records) + counted == len(everything)
    assert set(everything) - set(records) <= set(range(25))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1705276800000", 1_705_276_800_000),
        ("2024-01-15T00:00:00Z", 1_705_276_800_000),
        ("2024-01-15T02:00:00.250+02:00", 1_705_276_800_250),
    ],
)
def test_times_in_epoch_ms_or_iso_with_a_zone(text, expected):
    assert parse_time("--from-time", text) == expected


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: parse_time("--to-time", "yesterday"), "option --to-time: 'yesterday': expected epoch milliseconds"),
        (lambda: parse_partitions("--partitions", "0,x"), "option --partitions: '0,x': expected partition numbers"),
        (lambda: RestoreRequest(config(), "other", "t"), "option --topic: other is not one of the connector's topics"),
        (
            lambda: RestoreRequest(config(), "orders", "t", from_offset=9, to_offset=3),
            "option --from-offset/--to-offset: the range is empty",
        ),
        (
            lambda: RestoreSettings.from_config(config(**{"format.class": "ParquetFormat"})),
            "config key 'format.class': parquet objects cannot be restored",
        ),
        (
            lambda: RestoreSettings.from_config(
                config(
                    **{
                        "format.class": "JsonFormat",
                        "value.converter": "AvroConverter",
                        "value.converter.schema.registry.url": "http://r",
                    }
                )
            ),
            "config key 'value.converter': JsonFormat objects of avro values",
        ),
    ],
)
def test_refusals_name_the_option_or_key(call, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        call()


def test_the_board_shows_counts_per_partition_and_totals():
    lines = render({0: PartitionCounts(10, 4, 6), 1: PartitionCounts(3, 0, 3)}, 2.0)
    assert lines[1].split() == ["0", "10", "4", "6"] and lines[2].split() == ["1", "3", "0", "3"]
    assert lines[-1] == "2 partitions: 13 read, 4 already present, 9 produced; 6 records/s, 2 s"


def test_the_board_draws_the_last_counts_when_stopped():
    out = io.StringIO()
    board = RestoreBoard(out)
    counts = {0: PartitionCounts()}
    board.start(counts)
    counts[0].read = counts[0].produced = 5
    board.stop()
    assert out.getvalue().splitlines()[-2].split() == ["0", "5", "0", "5"]


class CheckpointLease:
    """A RestoreLease stand-in holding one checkpoint."""

    def __init__(self, checkpoint):
        self.stored, self.recorded = checkpoint, []

    def checkpoint(self, source_topic):
        return self.stored

    def record(self, token, source_topic, checkpoint, first=False):
        self.recorded.append((checkpoint, first))
        return True


@pytest.mark.parametrize(
    "stored, ranges, known",
    [
        # the first restore: the target's ends recorded, nothing scanned, nothing present
        (None, None, {}),
        # a rerun: the intervals taken as present, the target scanned from the recorded offsets only
        (
            Checkpoint({0: 40, 1: 30}, {0: Present([(0, 69)]), 2: Present([(5, 9)])}),
            {0: (40, 50), 1: (30, 35)},
            {0: [(0, 79)], 2: [(5, 9)]},
        ),
        # a target partition ending before its recorded offset (recreated): the intervals void, all scanned from low
        (Checkpoint({0: 60, 1: 30}, {0: Present([(0, 69)])}), {0: (10, 50), 1: (0, 35)}, {0: [(70, 79)]}),
    ],
)
def test_what_is_present_comes_from_the_checkpoint_and_the_tail_scan(monkeypatch, stored, ranges, known):
    # given a target of 2 partitions ending at 50 and 35 (partition 0 starting at 10), whose scan finds the
    # origins 70-79 of source partition 0
    monkeypatch.setattr(engine.kafka, "end_offsets", lambda target, topic, partitions: {0: (10, 50), 1: (0, 35)})
    scans = []

    def scan(target, topic, asked, source_topic):
        scans.append(asked)
        return {0: Present([(70, 79)])}, 15

    monkeypatch.setattr(engine.kafka, "present", scan)
    lease = CheckpointLease(stored)
    summary = engine.RestoreSummary(2, 2, True, False)
    # when a restore looks for what is present
    found, ends = engine._present(RestoreRequest(config(), "orders", "restored"), None, lease, None, summary)
    # then the intervals and the scanned tail are present, and the scan went over the expected ranges only
    assert {p: offsets.intervals() for p, offsets in found.items()} == known
    assert ends == {0: 50, 1: 35}
    assert scans == ([ranges] if ranges else [])
    assert lease.recorded == ([] if stored else [(Checkpoint({0: 50, 1: 35}, {}), True)])


@pytest.mark.parametrize(
    "sidecars, lacking",
    [
        ({}, ["timestamps", "keys", "headers"]),
        ({"store.kafka.keys": "true"}, ["timestamps", "headers"]),
        ({"store.kafka.keys": "true", "store.kafka.headers": "true"}, ["timestamps"]),
    ],
)
def test_what_a_backup_without_envelopes_does_not_restore_is_named_with_its_key(sidecars, lacking):
    # given ByteArray objects with some sidecars, or none
    settings = RestoreSettings.from_config(
        config(
            **{
                "format.class": "ByteArrayFormat",
                "value.converter": "ByteArrayConverter",
                "key.converter": "StringConverter",
                **sidecars,
            }
        )
    )
    # when a restore asks what its records will lack
    missing = settings.not_restored()
    # then it names each, with the key that decides it where there is one
    assert [line.split(" ", 1)[0] for line in missing] == lacking
    assert "keys" not in lacking or any("store.kafka.keys was off" in line and "null" in line for line in missing)
    assert "headers" not in lacking or any("store.kafka.headers was off" in line for line in missing)


def test_an_envelope_backup_lacks_nothing():
    assert RestoreSettings.from_config(config()).not_restored() == []
