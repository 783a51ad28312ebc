"""Registry Protobuf values read columnarly (convert/protobuf_arrow.py) write the same bytes as the general path."""

from __future__ import annotations

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from sink_engine.convert import protobuf_arrow
from sink_engine.convert.arrow_column import ArrowStructColumn
from sink_engine.convert.arrow_types import struct_table
from sink_engine.convert.confluent_protobuf_converter import ConfluentProtobufConverter
from sink_engine.convert.confluent_registry import SubjectNames
from sink_engine.format.parquet_format import ParquetFormat
from tests.columnar import (
    FORMAT_IDS,
    FORMATS,
    assert_runs_encode_alike,
    assert_same_output,
    assert_same_record_error,
    chunk_of,
    encoded,
)
from tests.protobuf_compiler import message_classes
from tests.schema_registry_server import SchemaRegistryServer

pytest.importorskip("ptars")

EVENT_PROTO = """syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

message Event {
  enum Kind { CLICK = 0; VIEW = 1; BUY = 2; }
  message Device { string os = 1; int32 version = 2; repeated string labels = 3; }
  int64 id = 1;
  Kind kind = 2;
  google.protobuf.Timestamp at = 3;
  optional double price = 4;
  repeated string tags = 5;
  Device device = 6;
  map<string, int64> counts = 7;
  oneof payment { string card = 8; Device terminal = 9; int32 points = 10; }
  google.protobuf.Int32Value rating = 11;
  uint64 big = 12;
  fixed32 small = 13;
  sint32 delta = 14;
  float ratio = 15;
  bool ok = 16;
  bytes blob = 17;
  repeated Kind history = 18;
  repeated Device devices = 19;
  map<int32, Device> by_slot = 20;
  google.protobuf.StringValue note = 21;
  repeated google.protobuf.Timestamp seen = 22;
  optional Kind maybe_kind = 23;
  repeated google.protobuf.Int64Value scores = 25;
  map<uint64, google.protobuf.StringValue> labels = 26;%s
}
message Other { string name = 1; repeated sfixed64 values = 2; }
"""
V2_FIELD = "\n  string channel = 24;"
CLASSES = {
    version: message_classes({"t/event.proto": EVENT_PROTO % (V2_FIELD if version == 2 else "")}) for version in (1, 2)
}
UNICODE = "ünï-ⓒ-😀"


def event(i: int, version: int = 1, large: bool = False):
    """Record i: every kind of field, set, unset or at its default in turn."""
    classes = CLASSES[version]
    device = {"os": ("ios", UNICODE, "")[i % 3], "version": -i, "labels": ["a", UNICODE][: i % 3]}
    message = classes["t.Event"](
        id=i * 7_919 - 2**40 * (i % 2),
        kind=9 if i % 11 == 10 else i % 3,
        tags=["x" * (300_000 if large else 3), UNICODE][: i % 3],
        counts=dict([("b", i), ("a", -1), ("ü", 2**40)][: i % 4]),
        big=2**64 - 1 - i if i % 2 else i,
        small=2**32 - 1 - i,
        delta=-i,
        ok=i % 2 == 0,
        ratio=(-0.0, float("inf"))[i % 13 - 11] if i % 13 >= 11 else 1 / (i + 1),
        blob=bytes(range(i % 256)),
        history=[1, 7, 0][: i % 4],
        devices=[device] * (i % 3),
        by_slot={i % 5: device, -1: {"os": "x"}} if i % 2 else {},
        scores=[{"value": i}, {}][: i % 3],
        labels={2**64 - 1 - i: {"value": UNICODE}, i: {}} if i % 2 else {},
    )
    if i % 7 != 3:
        message.at.seconds, message.at.nanos = (-86_400 * i - 1, 999_999_999) if i % 5 == 0 else (1_700_000_000 + i, i)
    if i % 4:
        message.price = (i % 4 - 1) * 0.25
    if i % 5 != 4:
        message.device.CopyFrom(classes["t.Event.Device"](**device))
    if i % 4 == 0:
        message.card = f"c{i}"
    elif i % 4 == 1:
        message.terminal.CopyFrom(classes["t.Event.Device"](**device))
    elif i % 4 == 2:
        message.points = 0
    if i % 3:
        message.rating.value = i % 3 - 1
    if i % 2:
        message.note.value = "" if i % 4 == 1 else f"n{i}"
    for second in range(i % 3):
        message.seen.add(seconds=second * 1_000, nanos=1_500_000)
    if i % 3 == 0:
        message.maybe_kind = i % 2
    if version == 2:
        message.channel = f"ch{i % 2}"
    return message


@pytest.fixture(scope="module")
def registry():
    with SchemaRegistryServer() as server:
        ids = {
            version: server.register(
                "t-value", EVENT_PROTO % (V2_FIELD if version == 2 else ""), schema_type="PROTOBUF"
            )["id"]
            for version in (1, 2)
        }
        yield server, ids


def value(ids: dict, message, version: int = 1) -> bytes:
    """The wire format: magic byte, schema id, message indexes ([0] as one 0 byte; [1] for Other), payload."""
    indexes = b"\x02\x02" if message.DESCRIPTOR.name == "Other" else b"\x00"
    return b"\x00" + ids[version].to_bytes(4, "big") + indexes + message.SerializeToString()


def converters(registry, monkeypatch, wrappers: bool = False):
    """(columnar, general): the same converter with and without the columnar reader."""
    server, ids = registry
    client = SchemaRegistryClient({"url": server.url})
    columnar = ConfluentProtobufConverter(client, SubjectNames("t"), wrappers)
    general = ConfluentProtobufConverter(client, SubjectNames("t"), wrappers)
    with monkeypatch.context() as patch:
        patch.setattr(protobuf_arrow, "arrow_reader", lambda *args: None)
        first = [value(ids, event(0)), value(ids, event(0, 2), 2), value(ids, CLASSES[1]["t.Other"]())]
        general.convert(chunk_of(first))  # fetches every decoder while the columnar reader is hidden
    return columnar, general


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
@pytest.mark.parametrize("wrappers", [False, True], ids=["wrappers-as-structs", "wrapper.for.nullables"])
@pytest.mark.parametrize("large", [False, True], ids=["small", "large-values"])
def test_columnar_values_encode_to_the_same_bytes_as_the_general_path(registry, monkeypatch, fmt, wrappers, large):
    # given mixed events of one schema id (unset and default fields, oneofs, enums with unknown numbers,
    # timestamps before the epoch, nested and repeated messages, maps, wrappers, unsigned integers, unicode)
    columnar, general = converters(registry, monkeypatch, wrappers)
    chunk = chunk_of([value(registry[1], event(i, large=large and i == 7)) for i in range(44)])
    # when both convert them
    fast, slow = columnar.convert(chunk), general.convert(chunk)
    # then the columnar column came from Arrow, and every format writes the same bytes from both
    assert_same_output(fmt, fast, slow)
    assert fast.arrow_table().equals(struct_table(slow), check_metadata=True)


def test_several_schema_ids_and_messages_in_one_batch_give_one_table_per_run_and_the_same_files(registry, monkeypatch):
    # given a chunk alternating runs of Event v1, Event v2 and Other (message indexes [1])
    columnar, general = converters(registry, monkeypatch)
    ids, other = registry[1], CLASSES[1]["t.Other"]
    makers = [
        lambda i: value(ids, event(i)),
        lambda i: value(ids, event(i, 2), 2),
        lambda i: value(ids, other(name=UNICODE * (i % 2), values=[-i, 2**62][: i % 3])),
    ]
    values = [makers[(i // 5) % 3](i) for i in range(30)]
    fast, slow = columnar.convert(chunk_of(values)), general.convert(chunk_of(values))
    # when each run of one schema is encoded (as the schema gate cuts files), then the bytes match
    assert_runs_encode_alike(fast, slow, 5)
    assert [s.describe() for s in fast.schemas] == [s.describe() for s in slow.schemas]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda payload: payload[:-3], id="truncated"),
        pytest.param(lambda payload: payload + b"\x2a\x02\x0a\xff", id="invalid-utf8-string"),
        pytest.param(lambda payload: payload + b"\x0f", id="wire-type-7"),
    ],
)
def test_a_bad_payload_in_the_middle_is_named_by_its_offset(registry, monkeypatch, bad):
    # given a bad payload at offset 105 among good ones
    columnar, general = converters(registry, monkeypatch)
    values = [value(registry[1], event(i)) for i in range(12)]
    values[5] = values[5][:6] + bad(values[5][6:])
    chunk = chunk_of(values)
    # when converted, then both converters name offset 105 with the same cause (what the dead-letter queue takes)
    assert_same_record_error(columnar, general, chunk, 105)


def far_future(message):
    message.at.seconds = 32_503_680_000  # year 3000: beyond what ptars' nanoseconds hold
    return message.SerializeToString()


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(lambda message: message.SerializeToString() + b"\x42\x01z", id="two-oneof-members"),
        pytest.param(lambda message: message.SerializeToString() + b"\x3a\x05\x0a\x01b\x10\x09", id="map-key-twice"),
        pytest.param(far_future, id="timestamp-in-year-3000"),
    ],
)
def test_valid_bytes_ptars_reads_otherwise_take_the_general_path(registry, monkeypatch, payload):
    # given a record whose bytes are valid but that ptars would read otherwise than upb (or cannot hold)
    columnar, general = converters(registry, monkeypatch)
    header = value(registry[1], event(0))[:6]
    values = [value(registry[1], event(i)) for i in range(1, 4)] + [header + payload(event(5))]
    chunk = chunk_of(values)
    # when converted, then the values are the general path's (upb keeps the last oneof member and map entry)
    column = columnar.convert(chunk)
    assert not isinstance(column, ArrowStructColumn)
    assert column.items == general.convert(chunk).items
    assert encoded(ParquetFormat(), column) == encoded(ParquetFormat(), general.convert(chunk))


@pytest.mark.parametrize(
    "proto",
    [
        'syntax = "proto3"; package u; import "google/type/date.proto"; message D { google.type.Date day = 1; }',
        'syntax = "proto2"; package u; message P { optional int32 n = 1; }',
        'syntax = "proto3"; package u; import "google/protobuf/empty.proto"; message E { google.protobuf.Empty e = 1; }',
    ],
    ids=["google-type-date", "proto2", "empty-message"],
)
def test_schemas_the_reader_does_not_cover_take_the_general_path(proto, monkeypatch):
    # given values of a schema outside the columnar reader's cover
    with SchemaRegistryServer() as server:
        schema_id = server.register("u-value", proto, schema_type="PROTOBUF")["id"]
        message = next(iter(message_classes({"u/u.proto": proto}).values()))()
        converter = ConfluentProtobufConverter(SchemaRegistryClient({"url": server.url}), SubjectNames("u"))
        # when converted, then the values come from the general path
        column = converter.convert(
            chunk_of([b"\x00" + schema_id.to_bytes(4, "big") + b"\x00" + message.SerializeToString()] * 2)
        )
    assert not isinstance(column, ArrowStructColumn) and len(column.items) == 2


def test_a_selection_of_a_columnar_column_builds_from_its_values(registry, monkeypatch):
    # given a columnar column, when records are picked out of order (a field partitioner's groups)
    columnar, general = converters(registry, monkeypatch)
    chunk = chunk_of([value(registry[1], event(i)) for i in range(10)])
    fast, slow = columnar.convert(chunk).select([7, 2, 3]), general.convert(chunk).select([7, 2, 3])
    # then it encodes the same bytes as the general path
    assert encoded(ParquetFormat(), fast) == encoded(ParquetFormat(), slow)


def test_without_ptars_every_batch_takes_the_general_path(registry, monkeypatch):
    # given ptars is not installed (a Python 3.9 job archive carries no requirements-columnar.txt)
    server, ids = registry
    monkeypatch.setattr(protobuf_arrow, "ptars", None)
    converter = ConfluentProtobufConverter(SchemaRegistryClient({"url": server.url}), SubjectNames("t"))
    # when events are converted, then they are decoded one by one, as before
    column = converter.convert(chunk_of([value(ids, event(i)) for i in range(3)]))
    assert not isinstance(column, ArrowStructColumn) and column.items[1]["id"] == 7_919 - 2**40


@pytest.mark.parametrize("fmt", FORMATS[::2], ids=["parquet/snappy", "avro"])
def test_nan_is_written_the_same(registry, monkeypatch, fmt):
    # given events with NaN ratios (not equal to themselves, so compared as bytes only)
    columnar, general = converters(registry, monkeypatch)
    messages = [event(i) for i in range(6)]
    for message in messages[::2]:
        message.ratio = float("nan")
    chunk = chunk_of([value(registry[1], message) for message in messages])
    # when both convert them, then the files are the same bytes
    fast = columnar.convert(chunk)
    assert isinstance(fast, ArrowStructColumn) and encoded(fmt, fast) == encoded(fmt, general.convert(chunk))
