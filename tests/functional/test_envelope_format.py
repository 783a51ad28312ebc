"""EnvelopeFormat end to end (real broker, moto's server, local Spark): every record backed up whole in each
encoding, read back by an independent reader, byte-identical after a crash and a rerun; a field partitioner over
JSON values with the envelope. The topics here are CreateTime: LogAppendTime is unit-tested (docs/aws-fidelity.md)."""

from __future__ import annotations

import base64
import gzip
import io
import random

import fastavro
import orjson
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer

from devtools.producer import REGIONS
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.functional.test_verify import verify
from tests.runs import rewritten_after_crash
from tests.s3_reader import object_bodies

BASE_MS = 1_705_276_800_000
PER_PARTITION = 30


def record(i: int, noise: random.Random) -> tuple:
    """(key, value, headers, timestamp) of the i-th record: null and empty keys and values, tombstones, bytes no
    converter reads, repeated header names with binary and null values."""
    key = None if i % 5 == 0 else b"" if i % 7 == 0 else f"k{i}".encode()
    if i % 6 == 3:
        value = None
    elif i % 11 == 4:
        value = b""
    elif i % 4 == 1:
        value = bytes(noise.randrange(256) for _ in range(40))
    else:
        value = orjson.dumps({"id": i, "region": REGIONS[i % 3]})
    headers = [("trace", bytes([0, 255, i])), ("trace", None), ("other", b"x")] if i % 2 == 0 else []
    return key, value, headers, BASE_MS + i


def produce_records(bootstrap: str, topic: str, records: list, partitions: int) -> None:
    """Round-robin over partitions; each partition's last record sent alone after a flush (an exact watermark)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    last = {i % partitions: i for i in range(len(records))}
    order = [i for i in range(len(records)) if i not in last.values()] + sorted(last.values())
    for n, i in enumerate(order):
        if n == len(records) - len(last):
            producer.flush(30)
        key, value, headers, stamp = records[i]
        producer.produce(topic, value, key, partition=i % partitions, headers=headers, timestamp=stamp)
    assert producer.flush(30) == 0


def expected(topic: str, records: list, partitions: int) -> list:
    rows = []
    for i, (key, value, headers, stamp) in enumerate(records):
        rows.append(
            {
                "topic": topic,
                "partition": i % partitions,
                "offset": i // partitions,
                "timestamp": stamp,
                "timestamp_type": "CreateTime",
                "key": key,
                "value": value,
                "headers": [{"key": name, "value": data} for name, data in headers],
            }
        )
    return sorted(rows, key=lambda r: (r["partition"], r["offset"]))


def _unbase64(text):
    return None if text is None else base64.b64decode(text, validate=True)


def read_back(body: bytes, encoding: str) -> list:
    if encoding == "parquet":
        return pq.read_table(io.BytesIO(body), use_threads=False).to_pylist()
    if encoding == "avro":
        return list(fastavro.reader(io.BytesIO(body)))
    rows = [orjson.loads(line) for line in gzip.decompress(body).splitlines()]
    for row in rows:
        row["key"], row["value"] = _unbase64(row["key"]), _unbase64(row["value"])
        row["headers"] = [{"key": h["key"], "value": _unbase64(h["value"])} for h in row["headers"]]
    return rows


ENCODINGS = {
    "parquet": ({"parquet.codec": "zstd"}, ".envelope.zstd.parquet"),
    "avro": ({"avro.codec": "deflate"}, ".envelope.avro"),
    "json": ({"s3.compression.type": "gzip"}, ".envelope.json.gz"),
}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_record_is_backed_up_whole_and_rerun_after_crash_is_byte_identical(
    stack, new_topic, spark, s3, dynamodb, connector, encoding
):
    # given a topic of 2 partitions with tombstones, null keys, empty values, random bytes and repeated headers
    overrides, extension = ENCODINGS[encoding]
    config = connector(
        **{
            "flush.size": 10,
            "sink.lease.duration.ms": 1500,
            "format.class": "EnvelopeFormat",
            "format.envelope.encoding": encoding,
            **overrides,
        }
    )
    topic = new_topic(config, 2)
    noise = random.Random(7)
    records = [record(i, noise) for i in range(2 * PER_PARTITION)]
    produce_records(stack.bootstrap_servers, topic, records, 2)
    # when a run dies after its uploads, its objects are deleted, and the job runs again
    crashed, after = rewritten_after_crash(config, spark, dynamodb, s3, f"topics/{topic}/")
    # then the rerun wrote the same keys with the same bytes, in the Confluent key layout
    assert after == crashed
    assert sorted(after) == sorted(
        f"topics/{topic}/partition={p}/{topic}+{p}+{s:010d}{extension}"
        for p in (0, 1)
        for s in range(0, PER_PARTITION, 10)
    )
    # and every record is there whole, in offset order, tombstones and unreadable values included
    rows = [row for key in sorted(after) for row in read_back(after[key], encoding)]
    assert rows == expected(topic, records, 2)


def test_a_field_partitioner_reads_json_values_and_keeps_their_bytes(
    stack, new_topic, spark, s3, dynamodb, connector, unique
):
    # given JSON values with a region, and between them one value that is not JSON (tolerated: a bad record)
    config = connector(
        **{
            "flush.size": 3,
            "format.class": "EnvelopeFormat",
            "format.envelope.encoding": "json",
            "partitioner.class": "FieldPartitioner",
            "partition.field.name": "region",
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": f"dlq-{unique}/",
        }
    )
    topic = new_topic(config, 1)
    values = [b'{"region": "%s", "n": %d}' % (REGIONS[i % 3].encode(), i) for i in range(9)]
    produced = values[:4] + [b"\x00not json"] + values[4:]
    produce_records(stack.bootstrap_servers, topic, [(None, v, [], BASE_MS) for v in produced], 1)
    # when the job runs
    run_job(config, spark, dynamodb)
    # then each region's records are under its field folder, their values the bytes read from Kafka
    landed = object_bodies(s3, BUCKET, f"topics/{topic}/")
    by_region: dict = {}
    for key in sorted(landed):
        lines = landed[key].splitlines()
        by_region.setdefault(key.split("/")[2], []).extend(_unbase64(orjson.loads(line)["value"]) for line in lines)
    assert by_region == {f"region={r}": [v for v in values if b'"%s"' % r.encode() in v] for r in REGIONS}
    # and the value the converter cannot read went to the dead letters, not to the backup
    letters = object_bodies(s3, BUCKET, config["errors.deadletterqueue.s3.prefix"])
    assert len(letters) == 1 and b"not json" not in b"".join(landed.values())


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_verify_proves_an_envelope_backup(stack, new_topic, spark, s3, dynamodb, connector, tmp_path, capsys, encoding):
    # given a backup of 2 partitions in files of 10 records, tombstones included, 5 records per partition unwritten
    config = connector(
        **{
            "flush.size": 10,
            "format.class": "EnvelopeFormat",
            "format.envelope.encoding": encoding,
            **ENCODINGS[encoding][0],
        }
    )
    topic = new_topic(config, 2)
    noise = random.Random(3)
    produce_records(stack.bootstrap_servers, topic, [record(i, noise) for i in range(50)], 2)
    run_job(config, spark, dynamodb)
    # when verify checks the bucket, then every committed offset is proven to be in one object
    code, out = verify(config, tmp_path, capsys)
    assert code == 0, out
    rows = [line.split() for line in out.splitlines() if line.startswith(topic)]
    assert [(row[0], row[1], row[3]) for row in rows] == [(f"{topic}-{p}", "0..19", "20") for p in (0, 1)]
