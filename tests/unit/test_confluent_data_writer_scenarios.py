"""Scenarios of the Confluent S3 sink's DataWriterAvroTest, DataWriterParquetTest, DataWriterJsonTest,
DataWriterByteArrayTest and S3SinkTaskTest (confluentinc/kafka-connect-storage-cloud,
kafka-connect-s3/src/test/java/io/confluent/connect/s3/), each named after the test method it follows: the
records (createRecords' Struct, createRecordsWithAlteringSchemas, createRecordsWithPrimitive, as Kafka Connect's
converters write them) and settings of that test, and the objects and committed offsets it asserts (its
`validOffsets`: the start offset of each file, then the end of the last)."""

from __future__ import annotations

import orjson
import pytest

from tests.confluent_scenarios import (
    RECORD_SCHEMA,
    Rec,
    avro_schema_of,
    connect_record,
    envelope,
    key_of,
    landed,
    run_records,
    structs,
)
from tests.s3_reader import object_bodies

AVRO, PARQUET, JSON = "AvroFormat", "ParquetFormat", "JsonFormat"
EXTENSIONS = {AVRO: ".avro", PARQUET: ".snappy.parquet", JSON: ".json"}
ENVELOPES = {"value.converter.schemas.enable": "true"}
# StorageSinkTestBase.createNewSchema: version 2 adds `string` (default "abc"); createNewRecord sets it to "def"
NEW_SCHEMA = {
    **RECORD_SCHEMA,
    "version": 2,
    "fields": [*RECORD_SCHEMA["fields"], {"field": "string", "type": "string", "optional": False, "default": "abc"}],
}
NO_VERSION = {key: value for key, value in RECORD_SCHEMA.items() if key != "version"}
INT32 = {"type": "int32", "optional": False}


def file_starts(s3, extension: str) -> list[int]:
    """The start offset of each data object of partition 0."""
    return sorted(
        int(key.split("+")[-1][:10])
        for key in landed(s3)
        if key.endswith(extension) and ".keys." not in key and ".headers." not in key
    )


def altering(size: int) -> list[Rec]:
    """createRecordsWithAlteringSchemas: the record of version 1 and of version 2, alternately."""
    return [
        Rec(
            envelope(NEW_SCHEMA, {**connect_record(), "string": "def"})
            if i % 2
            else envelope(RECORD_SCHEMA, connect_record())
        )
        for i in range(size)
    ]


@pytest.mark.parametrize("fmt", [AVRO, PARQUET, JSON])
def test_write_records(moto_s3, fmt):
    # DataWriterAvroTest.testWriteRecords, DataWriterParquetTest.testWithDefaultCodecWriteRecords,
    # DataWriterJsonTest.testWithSchema, S3SinkTaskTest.testWriteRecord: 7 records, flush.size 3
    result = run_records(moto_s3, {**ENVELOPES, "format.class": fmt}, structs([connect_record()] * 7))
    assert file_starts(moto_s3, EXTENSIONS[fmt]) == [0, 3] and result.next_offset == 6  # validOffsets {0, 3, 6}
    for records in landed(moto_s3).values():
        assert [{**r, "float": pytest.approx(r["float"])} for r in records] == [connect_record()] * 3


@pytest.mark.parametrize(
    "settings, extension",
    [
        ({"format.class": AVRO, "avro.codec": "deflate"}, ".avro"),  # DataWriterAvroTest.testCompressFile
        ({"format.class": PARQUET, "parquet.codec": "none"}, ".parquet"),  # testUncompressedCompressionWriteRecords
        ({"format.class": PARQUET, "parquet.codec": "gzip"}, ".gz.parquet"),  # testGzipCompressionWriteRecords
        ({"format.class": PARQUET, "parquet.codec": "snappy"}, ".snappy.parquet"),  # testSnappyCompressionWriteRecords
        ({"format.class": JSON, "s3.compression.type": "gzip"}, ".json.gz"),  # DataWriterJsonTest.testGzipCompression*
    ],
)
def test_compressed_files(moto_s3, settings, extension):
    run_records(moto_s3, {**ENVELOPES, **settings}, structs([connect_record()] * 7))
    assert file_starts(moto_s3, extension) == [0, 3]
    assert all(len(records) == 3 for records in landed(moto_s3).values())


@pytest.mark.parametrize("fmt", [AVRO, PARQUET])
@pytest.mark.parametrize(
    "mode, first, expected_starts, next_offset",
    [
        ("backward", 0, [0, 1, 3, 5], 7),  # testProjectBackward: validOffsets {0, 1, 3, 5, 7}
        ("forward", 1, [1, 2, 4, 6], 8),  # testProjectForward: from the record of version 2, {1, 2, 4, 6, 8}
        ("none", 0, [0, 1, 2, 3, 4, 5], 6),  # testProjectNone: every schema change closes the file, {0, ..., 6}
    ],
)
def test_project(moto_s3, fmt, mode, first, expected_starts, next_offset):
    # flush.size 2, createRecordsWithAlteringSchemas(7) (forward: of 8, without the first); `rotate` keeps one file
    # per schema at a time, as the connector (this engine's default under NONE gives each schema its own files)
    records = altering(8 if first else 7)[first:]
    settings = {
        **ENVELOPES,
        "format.class": fmt,
        "flush.size": 2,
        "schema.compatibility": mode,
        "sink.schema.files": "rotate",
    }
    result = run_records(moto_s3, settings, records, start=first)
    assert file_starts(moto_s3, EXTENSIONS[fmt]) == expected_starts and result.next_offset == next_offset


def test_project_no_version(moto_s3):
    # testProjectNoVersion: a record without a schema version first, under BACKWARD: nothing is written
    records = [Rec(envelope(NO_VERSION, connect_record())), *altering(7)]
    result = run_records(
        moto_s3, {**ENVELOPES, "format.class": AVRO, "flush.size": 2, "schema.compatibility": "backward"}, records
    )
    assert result.error is not None and "version" in result.error and landed(moto_s3) == {}


def test_pre_commit_on_schema_incompatibility_rotation(moto_s3):
    # testPreCommitOnSchemaIncompatibilityRotation: flush.size 2, versions 1 then 2: offset 1 is committed
    result = run_records(
        moto_s3, {**ENVELOPES, "format.class": AVRO, "flush.size": 2, "sink.schema.files": "rotate"}, altering(2)
    )
    assert result.next_offset == 1 and file_starts(moto_s3, ".avro") == [0]


@pytest.mark.parametrize("records, committed", [(3, 3), (5, 3), (6, 6), (8, 6), (9, 9)])
def test_pre_commit_on_size_rotation(moto_s3, records, committed):
    # testPreCommitOnSizeRotation: flush.size 3; the offset committed after each put
    result = run_records(moto_s3, {**ENVELOPES, "format.class": AVRO}, structs([connect_record()] * records))
    assert result.next_offset == committed


def test_recovery_with_partial_file(moto_s3):
    # S3SinkTaskTest.testRecoveryWithPartialFile: an object of 2 records left at the first key is written over
    moto_s3.put_object(Bucket="lake", Key=key_of(0, extension=".avro"), Body=b"partial")
    run_records(moto_s3, {**ENVELOPES, "format.class": AVRO}, structs([connect_record()] * 7))
    assert {key: len(records) for key, records in landed(moto_s3).items()} == {
        key_of(0, extension=".avro"): 3,
        key_of(3, extension=".avro"): 3,
    }


@pytest.mark.parametrize(
    "fmt, row, schema",
    [
        # S3SinkTaskTest.testWriteRecordWithPrimitives: int32 values; Avro files of the bare type
        # (AvroRecordWriterProvider unwraps AvroData's NonRecordContainer); Parquet needs a record: a column `value`
        # (format/wrapped.py)
        (AVRO, 12, "int"),
        (PARQUET, {"value": 12}, None),
        (JSON, 12, None),
    ],
)
def test_write_record_with_primitives(moto_s3, fmt, row, schema):
    run_records(moto_s3, {**ENVELOPES, "format.class": fmt}, [Rec(envelope(INT32, 12))] * 7)
    assert {key: records for key, records in landed(moto_s3).items()} == {
        key_of(start, extension=EXTENSIONS[fmt]): [row] * 3 for start in (0, 3)
    }
    if schema:
        assert avro_schema_of(moto_s3, key_of(0, extension=".avro")) == schema


NULLS = (
    [Rec(envelope(INT32, 12))] * 3
    + [Rec(envelope({"type": "string", "optional": True}, None)), Rec(None)]
    + [Rec(envelope(INT32, 12))] * 4
)


def test_write_null_records(moto_s3):
    # S3SinkTaskTest.testWriteNullRecords: behavior.on.null.values=ignore skips a null value of an optional schema
    # (JsonConverter.toConnectData: a null payload under an optional schema is a null value) and a Kafka null
    result = run_records(moto_s3, {**ENVELOPES, "format.class": AVRO, "behavior.on.null.values": "ignore"}, NULLS)
    assert {key: records for key, records in landed(moto_s3).items()} == {
        key_of(0, extension=".avro"): [12] * 3,
        key_of(5, extension=".avro"): [12] * 3,
    }
    assert result.error is None and result.next_offset == 8


@pytest.mark.parametrize(
    "behavior, expected",
    [
        ("fail", "null value"),  # S3SinkTask.maybeSkipOnNullValue throws for fail...
        ("write", None),  # ...and passes it to the tombstone partition for write
    ],
)
def test_null_payload_follows_behavior_on_null_values(moto_s3, behavior, expected):
    result = run_records(
        moto_s3, {**ENVELOPES, "format.class": JSON, "behavior.on.null.values": behavior, "flush.size": 1}, NULLS[2:4]
    )
    if expected:
        assert expected in (result.error or "") and "t-0@1" in (result.error or "") and result.next_offset == 1
    else:
        assert landed(moto_s3) == {key_of(0): [12], key_of(1, "tombstone"): [None]}


def test_byte_array_no_schema_and_custom_extension_and_line_separator(moto_s3):
    # DataWriterByteArrayTest.testNoSchema / testCustomExtensionAndLineSeparator: the values' bytes, joined by
    # format.bytearray.separator, in objects of format.bytearray.extension
    values = [f"value{i}".encode() for i in range(7)]
    run_records(
        moto_s3,
        {
            "format.class": "ByteArrayFormat",
            "format.bytearray.separator": "SEPARATOR",
            "format.bytearray.extension": ".customExtensionForTest",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        },
        [Rec(value) for value in values],
    )
    bodies = object_bodies(moto_s3, "lake", "topics/t/")
    assert bodies == {
        key_of(start, extension=".customExtensionForTest"): b"".join(
            v + b"SEPARATOR" for v in values[start : start + 3]
        )
        for start in (0, 3)
    }


def test_json_no_schema(moto_s3):
    # DataWriterJsonTest.testNoSchema: schemaless JSON values, written as they are
    values = [{"boolean": True, "int": 12, "long": 12, "float": 12.2, "double": 12.2}] * 7
    run_records(moto_s3, {"value.converter.schemas.enable": "false"}, [Rec(orjson.dumps(v)) for v in values])
    assert landed(moto_s3) == {key_of(start): values[:3] for start in (0, 3)}


def test_schema_has_array_of_optional_items(moto_s3):
    # DataWriterParquetTest.testWriteRecordsInMultiplePartitionsWithArrayOfOptionalString: an array of optional
    # strings holding nulls goes to Parquet (ParquetRecordWriterProvider.schemaHasArrayOfOptionalItems)
    schema = {
        "type": "struct",
        "optional": False,
        "fields": [
            {"field": "items", "type": "array", "optional": False, "items": {"type": "string", "optional": True}}
        ],
    }
    run_records(moto_s3, {**ENVELOPES, "format.class": PARQUET}, structs([{"items": ["a", None, "b"]}] * 3, schema))
    assert landed(moto_s3) == {key_of(0, extension=".snappy.parquet"): [{"items": ["a", None, "b"]}] * 3}


@pytest.mark.parametrize("behavior", ["ignore", "write", "fail"])
def test_a_json_null_without_a_schema_is_a_null_value(moto_s3, behavior):
    # JsonConverter.toConnectData with schemas.enable=false reads the JSON `null` as a null value, which
    # S3SinkTask.maybeSkipOnNullValue then skips, writes to the tombstone partition or fails on
    records = [Rec(b'{"a":1}'), Rec(b" null "), Rec(b'{"a":"null"}')]
    result = run_records(
        moto_s3,
        {"behavior.on.null.values": behavior, "flush.size": 1, "value.converter.schemas.enable": "false"},
        records,
    )
    expected = {key_of(0): [{"a": 1}], key_of(2): [{"a": "null"}]}
    if behavior == "fail":
        assert "t-0@1" in (result.error or "") and landed(moto_s3) == {key_of(0): [{"a": 1}]}
    else:
        extra = {key_of(1, "tombstone"): [None]} if behavior == "write" else {}
        assert result.error is None and landed(moto_s3) == {**expected, **extra}
