"""Scenarios of the Confluent S3 sink's TopicPartitionWriterTest (confluentinc/kafka-connect-storage-cloud,
kafka-connect-s3/src/test/java/io/confluent/connect/s3/TopicPartitionWriterTest.java), each named after the test
method it follows: the same records (createRecordBatches' Structs, as JsonConverter envelopes) and connector
settings, through one task's range into S3, and the objects (keys, record counts, values) that test asserts.
Records the connector leaves in open files at `close()` are the records this engine leaves for the next run."""

from __future__ import annotations

import pytest

from tests.confluent_scenarios import (
    HOURLY,
    RECORD_SCHEMA,
    WRITER_BASE,
    Rec,
    avro_schema_of,
    envelope,
    key_of,
    la_ms,
    landed,
    record_batches,
    run_records,
    structs,
)

MINUTE, HOUR, DAY = 60_000, 3_600_000, 86_400_000
HOUR_10, HOUR_12 = "year=2017/month=03/day=02/hour=10", "year=2017/month=03/day=02/hour=12"


def files(s3) -> dict[str, int]:
    """Each object's key and record count."""
    return {key: len(records) for key, records in landed(s3).items()}


def ints(s3) -> dict[str, list]:
    """Each data object's `int` values."""
    return {
        key: [record["int"] for record in records]
        for key, records in landed(s3).items()
        if ".keys." not in key and ".headers." not in key
    }


def test_write_record_default_with_padding(moto_s3):
    # testWriteRecordDefaultWithPadding: filename.offset.zero.pad.width 2, flush.size 3, 9 records
    run_records(moto_s3, {**WRITER_BASE, "filename.offset.zero.pad.width": 2}, structs(record_batches(3, 3)))
    assert files(moto_s3) == {f"topics/t/partition=0/t+0+{n:02d}.avro": 3 for n in (0, 3, 6)}


def test_write_record_field_partitioner(moto_s3):
    # testWriteRecordFieldPartitioner: flush.size 9, FieldPartitioner on `int`, 6 batches of int 16, 17, 18
    run_records(
        moto_s3,
        {**WRITER_BASE, "flush.size": 9, "partitioner.class": "FieldPartitioner"},
        structs(record_batches(3, 6)),
    )
    assert ints(moto_s3) == {
        key_of(start + n, f"int={16 + n}", ".avro"): [16 + n] * 3 for start in (0, 9) for n in range(3)
    }


def test_write_record_time_based_partition_record_timestamp_hours(moto_s3):
    # testWriteRecordTimeBasedPartitionRecordTimestampHours: one record every 20 s from 10:00, then from 12:00 + 3 min
    first, later = la_ms(2017, 3, 2, 10), la_ms(2017, 3, 2, 12)
    stamps = [first + i * 20_000 for i in range(9)] + [later + i * 20_000 for i in range(9, 18)]
    run_records(
        moto_s3,
        {**WRITER_BASE, **HOURLY, "flush.size": 1000, "rotate.interval.ms": MINUTE},
        structs(record_batches(3, 6), stamps=stamps),
    )
    # then three records per minute; 15, 16, 17 wait for a later record
    assert files(moto_s3) == {
        **{key_of(n, HOUR_10, ".avro"): 3 for n in (0, 3, 6)},
        **{key_of(n, HOUR_12, ".avro"): 3 for n in (9, 12)},
    }


def test_write_record_time_based_partition_record_timestamp_days(moto_s3):
    # testWriteRecordTimeBasedPartitionRecordTimestampDays: the same records with the DailyPartitioner
    first, later = la_ms(2017, 3, 2, 10), la_ms(2017, 3, 2, 12)
    stamps = [first + i * 20_000 for i in range(9)] + [later + i * 20_000 for i in range(9, 18)]
    daily = {"partitioner.class": "DailyPartitioner", "timestamp.extractor": "Record"}
    run_records(
        moto_s3,
        {**WRITER_BASE, **daily, "flush.size": 1000, "rotate.interval.ms": MINUTE},
        structs(record_batches(3, 6), stamps=stamps),
    )
    assert files(moto_s3) == {key_of(n, "year=2017/month=03/day=02", ".avro"): 3 for n in (0, 3, 6, 9, 12)}


def test_write_record_time_based_partition_with_null_timestamp(moto_s3):
    # testWriteRecordTimeBasedPartitionWithNullTimestamp: a record without a timestamp under the Record extractor
    result = run_records(
        moto_s3,
        {
            **WRITER_BASE,
            "partitioner.class": "TimeBasedPartitioner",
            "timestamp.extractor": "Record",
            "path.format": "'year'=YYYY_'month'=MM_'day'=dd",
            "partition.duration.ms": DAY,
            "rotate.interval.ms": MINUTE,
        },
        structs(record_batches(1, 1), stamps=[-1]),
    )
    # then it fails (the connector throws a ConnectException), naming the record
    assert result.error is not None and "t-0@0" in result.error and files(moto_s3) == {}


OUT_OF_ORDER = [0, -2, 9, -5, 10]  # minutes from 10:00 of records 0..4


@pytest.mark.parametrize(
    "rotate_on_change, expected",
    [
        # testWriteRecordTimeBasedPartitionRecordTimestampHoursOutOfOrder: one file per hour, until the 10 minutes pass
        ("false", {key_of(0, HOUR_10, ".avro"): [16, 16], key_of(1, HOUR_10.replace("10", "09"), ".avro"): [16, 16]}),
        # ...AndRotateOnPartitionChange (the default): each change of hour closes the open file
        (None, {key_of(n, HOUR_10 if n % 2 == 0 else HOUR_10.replace("10", "09"), ".avro"): [16] for n in range(4)}),
    ],
)
def test_write_record_time_based_partition_record_timestamp_hours_out_of_order(moto_s3, rotate_on_change, expected):
    hour = la_ms(2017, 3, 2, 10)
    settings = {
        **WRITER_BASE,
        **HOURLY,
        "flush.size": 1000,
        "rotate.interval.ms": 10 * MINUTE,
        "rotate.file.on.partition.change": rotate_on_change,
    }
    run_records(moto_s3, settings, structs(record_batches(1, 5), stamps=[hour + m * MINUTE for m in OUT_OF_ORDER]))
    assert ints(moto_s3) == expected


def test_write_record_time_based_partition_record_timestamp_hours_daily_rotation_interval(moto_s3):
    # testWriteRecordTimeBasedPartitionRecordTimestampHoursDailyRotationInterval: rotate.interval.ms one day, no
    # rotation on partition change: four records of four hours stay open until a record a day after the first
    first_day, next_day = la_ms(2017, 3, 1, 10), la_ms(2017, 3, 2, 5)
    stamps = [first_day, first_day - 2 * HOUR, next_day + 2 * HOUR, next_day, next_day + 5 * HOUR]
    settings = {
        **WRITER_BASE,
        **HOURLY,
        "flush.size": 1000,
        "rotate.interval.ms": DAY,
        "rotate.file.on.partition.change": "false",
    }
    records = structs(record_batches(1, 5), stamps=stamps)
    run_records(moto_s3, settings, records[:4])
    assert files(moto_s3) == {}
    run_records(moto_s3, settings, records)
    assert files(moto_s3) == {
        key_of(0, "year=2017/month=03/day=01/hour=10", ".avro"): 1,
        key_of(1, "year=2017/month=03/day=01/hour=08", ".avro"): 1,
        key_of(2, "year=2017/month=03/day=02/hour=07", ".avro"): 1,
        key_of(3, "year=2017/month=03/day=02/hour=05", ".avro"): 1,
    }


@pytest.mark.parametrize(
    "cap, records, expected",
    [
        # testWriteRecordFieldBasedPartitionAndRotateOnMaxSize: a sixth open file closes the five open ones
        ("5", record_batches(6, 1), {key_of(n, f"int={16 + n}", ".avro"): 1 for n in range(5)}),
        # testWriteRecordFieldBasedPartitionAndRotateOnFlushSizeWhenMaxFilesIsUnset: -1, the connector's default
        ("-1", record_batches(1, 20), {key_of(n, "int=16", ".avro"): 10 for n in (0, 10)}),
    ],
)
def test_write_record_field_based_partition_and_partitioner_max_open_files(moto_s3, cap, records, expected):
    run_records(
        moto_s3,
        {**WRITER_BASE, "partitioner.class": "FieldPartitioner", "flush.size": 10, "partitioner.max.open.files": cap},
        structs(records),
    )
    assert files(moto_s3) == expected


def test_write_record_field_based_partition_and_rotate_on_max_size_with_multiple_fields(moto_s3):
    # testWriteRecordFieldBasedPartitionAndRotateOnMaxSizeWithMultipleFields: partition.field.name int,boolean
    run_records(
        moto_s3,
        {
            **WRITER_BASE,
            "partitioner.class": "FieldPartitioner",
            "flush.size": 10,
            "partitioner.max.open.files": 5,
            "partition.field.name": "int,boolean",
        },
        structs(record_batches(6, 1)),
    )
    assert files(moto_s3) == {key_of(n, f"int={16 + n}/boolean=true", ".avro"): 1 for n in range(5)}


TIMESTAMP_FIELD_SCHEMAS = {
    # StorageSinkTestBase.createSchemaWithTimestampField: `timestamp` int64 epoch ms...
    "int64": {"type": "int64", "optional": False},
    # ...or of Connect's Timestamp logical type (RecordFieldTimestampExtractor reads its Date)
    "Timestamp": {"type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
}


@pytest.mark.parametrize("field_type", list(TIMESTAMP_FIELD_SCHEMAS))
def test_write_record_time_based_partition_field_timestamp_hours(moto_s3, field_type):
    # testWriteRecordTimeBasedPartitionFieldTimestampHours: RecordField on `timestamp`, a last record 6 h later
    schema = {
        **RECORD_SCHEMA,
        "fields": [
            *RECORD_SCHEMA["fields"],
            {"field": "string", "type": "string", "optional": False, "default": "abc"},
            {"field": "timestamp", **TIMESTAMP_FIELD_SCHEMAS[field_type]},
        ],
    }
    first = la_ms(2017, 3, 2, 10)
    stamps = [first + i * 20_000 for i in range(9)] + [first + 2 * HOUR + i * 20_000 for i in range(9)]
    stamps.append(first + 6 * HOUR)
    values = [{**record, "string": "def", "timestamp": stamp} for record, stamp in zip(record_batches(19, 1), stamps)]
    settings = {
        **WRITER_BASE,
        **HOURLY,
        "timestamp.extractor": "RecordField",
        "timestamp.field": "timestamp",
        "flush.size": 1000,
        "rotate.interval.ms": MINUTE,
    }
    run_records(moto_s3, settings, structs(values, schema))
    assert files(moto_s3) == {
        **{key_of(n, HOUR_10, ".avro"): 3 for n in (0, 3, 6)},
        **{key_of(n, HOUR_12, ".avro"): 3 for n in (9, 12, 15)},
    }


@pytest.mark.parametrize(
    "settings",
    [
        {"flush.size": 10},  # testNoFilesWrittenWithoutCommit
        {
            "flush.size": 10,
            "rotate.interval.ms": MINUTE,
        },  # testRotateIntervalIsIgnoredWhenUsedWithNoTimeBasedPartitioner
    ],
)
def test_no_files_written_without_commit(moto_s3, settings):
    result = run_records(moto_s3, {**WRITER_BASE, **settings}, structs(record_batches(3, 3)))
    assert files(moto_s3) == {} and result.next_offset == 0


@pytest.mark.parametrize("topics_dir", ["this.is.dir", "this.is.json.dir", "this.is.avro.dir"])
def test_correct_record_writer(moto_s3, topics_dir):
    # DataWriter*Test.testCorrectRecordWriter{Basic,Other,This}: an extension inside topics.dir changes nothing
    run_records(moto_s3, {**WRITER_BASE, "topics.dir": topics_dir}, structs(record_batches(3, 1)))
    assert list(landed(moto_s3, f"{topics_dir}/t/")) == [f"{topics_dir}/t/partition=0/t+0+0000000000.avro"]


HEADERS = [("first-header-key", b"first-header-value"), ("second-header-key", b"8"), ("third-header-key", b"6.5")]
HEADER_LIST = [{"key": name, "value": value.decode()} for name, value in HEADERS]


@pytest.mark.parametrize(
    "keys_format, headers_format, key_record, headers_record",
    [
        # testRecordKeysAndHeadersWritten: `.keys.avro` holds the key alone (verifyRecordElement's KEYS_AVRO_EXT:
        # AvroData of the key schema, unwrapped), `.headers.avro` the list alone (HeaderRecordView unenveloped)
        ("AvroFormat", "AvroFormat", "key", HEADER_LIST),
        # testRecordHeadersWrittenJson: `.headers.json` lines are {"headers": [...]} (HeaderRecordView enveloped)
        ("AvroFormat", "JsonFormat", "key", {"headers": HEADER_LIST}),
        # ParquetRecordWriterProvider asks the views enveloped: RecordKey{key}, RecordHeaders{headers}
        ("ParquetFormat", "ParquetFormat", {"key": "key"}, {"headers": HEADER_LIST}),
    ],
)
def test_record_keys_and_headers_written(moto_s3, keys_format, headers_format, key_record, headers_record):
    settings = {
        **WRITER_BASE,
        "store.kafka.keys": "true",
        "store.kafka.headers": "true",
        "keys.format.class": keys_format,
        "headers.format.class": headers_format,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    run_records(moto_s3, settings, structs(record_batches(3, 3), headers=HEADERS))
    objects = landed(moto_s3)
    assert len(objects) == 9
    for start in (0, 3, 6):
        stem = key_of(start, extension="")
        keys = next(v for k, v in objects.items() if k.startswith(stem + ".keys."))
        headers = next(v for k, v in objects.items() if k.startswith(stem + ".headers."))
        assert keys == [key_record] * 3 and headers == [headers_record] * 3
    if keys_format == "AvroFormat":
        assert avro_schema_of(moto_s3, key_of(0, extension=".keys.avro")) == "string"


def test_nested_field_partitioner(moto_s3):
    # testNestedFieldPartitioner: partition.field.name outer.inner, values cycling 16, 17, 18, flush.size 9
    inner = {"type": "struct", "optional": False, "fields": [{"field": "inner", "type": "int32", "optional": False}]}
    schema = {"type": "struct", "optional": False, "fields": [{"field": "outer", **inner}]}
    values = [{"outer": {"inner": 16 + i % 3}} for i in range(18)]
    run_records(
        moto_s3,
        {
            **WRITER_BASE,
            "partitioner.class": "FieldPartitioner",
            "flush.size": 9,
            "partition.field.name": "outer.inner",
        },
        structs(values, schema),
    )
    assert files(moto_s3) == {
        key_of(start + n, f"outer.inner={16 + n}", ".avro"): 3 for start in (0, 9) for n in range(3)
    }


@pytest.mark.parametrize(
    "stored, bad",
    [
        # testExceptionOnNullKeysReported: with keys stored, a null key ("Key cannot be null for SinkRecord")
        ("store.kafka.keys", Rec(envelope(RECORD_SCHEMA, record_batches(1, 1)[0]), key=None, headers=HEADERS)),
        # testExceptionOnEmptyHeadersReported / testExceptionOnNullHeadersReported: with headers stored, no headers
        ("store.kafka.headers", Rec(envelope(RECORD_SCHEMA, record_batches(1, 1)[0]))),
    ],
)
def test_exception_on_null_keys_or_headers_reported(moto_s3, stored, bad):
    # is a bad record: with errors.tolerance=all it goes to the dead-letter queue (the connector's errant record
    # reporter) and the records around it are written, the sidecars lined up with them
    records = structs(record_batches(3, 3), headers=HEADERS)
    records.insert(2, bad)
    settings = {
        **WRITER_BASE,
        stored: "true",
        "keys.format.class": "JsonFormat",
        "headers.format.class": "JsonFormat",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "errors.tolerance": "all",
        "errors.deadletterqueue.s3.prefix": "dead",
    }
    result = run_records(moto_s3, settings, records)
    assert result.error is None and sum(result.dead_letters.values()) == 1
    assert ints(moto_s3) == {key_of(start, extension=".avro"): [16, 17, 18] for start in (0, 4, 7)}
    sidecars = {k: len(v) for k, v in landed(moto_s3).items() if ".keys." in k or ".headers." in k}
    assert sorted(sidecars.values()) == [3, 3, 3]


def test_a_tombstone_between_records_of_one_hour_does_not_rotate(moto_s3):
    # TopicPartitionWriter.shouldRotateOnPartitionChangeWithTombstoneCheck: with behavior.on.null.values=write a
    # move to or from the tombstone partition is no partition change (testTombstoneWritingConfig* use it with
    # a SchemaPartitioner, which this engine has not)
    hour = la_ms(2017, 3, 2, 10)
    records = structs(record_batches(2, 1), stamps=[hour, hour + 1])
    records.insert(1, Rec(None, timestamp=hour))
    settings = {
        **WRITER_BASE,
        **HOURLY,
        "format.class": "JsonFormat",
        "flush.size": 3,
        "rotate.interval.ms": HOUR,
        "behavior.on.null.values": "write",
        "store.kafka.keys": "true",
        "keys.format.class": "JsonFormat",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "sink.schema.files": "rotate",
    }  # flush.size counts every record of the topic-partition
    run_records(moto_s3, settings, records)
    # then the hour's file holds both records; the tombstone's key is in the tombstone partition (where this engine
    # also writes a value object of one JSON null per tombstone; the connector writes none there)
    assert files(moto_s3) == {
        key_of(0, HOUR_10): 2,
        key_of(0, HOUR_10, ".keys.json"): 2,
        key_of(1, "tombstone"): 1,
        key_of(1, "tombstone", ".keys.json"): 1,
    }


def test_write_record_default_with_empty_topics_dir(moto_s3):
    # testWriteRecordDefaultWithEmptyTopicsDir: topics.dir "" puts the keys at the bucket's root (FileUtils.fileKey:
    # no prefix for a blank topics.dir)
    run_records(moto_s3, {**WRITER_BASE, "topics.dir": ""}, structs(record_batches(3, 3)))
    assert {key: len(records) for key, records in landed(moto_s3, "").items()} == {
        f"t/partition=0/t+0+{start:010d}.avro": 3 for start in (0, 3, 6)
    }
