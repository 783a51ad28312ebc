"""`sink-engine verify` on buckets the sink wrote: it passes, and names the partition and offsets when an object
is deleted, copied under another start offset, or a dead letter is removed."""

from __future__ import annotations

import json

import pytest

from devtools.producer import produce
from sink_engine import cli
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.functional.test_exactly_once import _raw
from tests.runs import committed

FORMATS = {
    "json": {"format.class": "JsonFormat"},
    "parquet": {"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"},
    "avro": {"format.class": "io.confluent.connect.s3.format.avro.AvroFormat", "avro.codec": "deflate"},
    "blockgzip": {"format.class": "BlockGzipFormat", "format.blockgzip.block.size": 400},
    "bytearray": {"format.class": "ByteArrayFormat", "value.converter": "ByteArrayConverter"},
    "json-fields-tagged": {
        "format.class": "JsonFormat",
        "s3.object.tagging": "true",
        "partitioner.class": "FieldPartitioner",
        "partition.field.name": "region",
    },
}


def verify(config, tmp_path, capsys, *args: str) -> tuple[int, str]:
    """`sink-engine verify` on the connector: its exit code and output."""
    config_file = tmp_path / "connector.json"
    config_file.write_text(json.dumps({"name": config.name, "config": _raw(config)}))
    capsys.readouterr()
    code = cli.main(["verify", "--config", str(config_file), *args])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("name", FORMATS)
def test_verify_passes_on_a_bucket_the_sink_wrote(new_topic, spark, s3, dynamodb, connector, tmp_path, capsys, name):
    # given two partitions written by the sink in files of 10 records, with 2 records per partition not yet written
    config = connector(**{"flush.size": 10, **FORMATS[name]})
    topic = new_topic(config, 2, events=44)
    run_job(config, spark, dynamodb)
    # when verify checks the bucket
    code, out = verify(config, tmp_path, capsys)
    # then every committed offset is proven to be in one object, with one listing and one request per object
    # (tags, a Parquet footer, a Block-GZIP index, an Avro object's first window, a JSON object)
    assert code == 0, out
    rows = [line.split() for line in out.splitlines() if line.startswith(topic)]
    assert [(row[0], row[1], row[3]) for row in rows] == [(f"{topic}-{p}", "0..19", "20") for p in (0, 1)]
    assert all(" proven " in line and line.endswith("ok") for line in out.splitlines() if line.startswith(topic))
    objects = int(out.splitlines()[-1].split()[0])
    assert out.splitlines()[-1] == f"{objects} data objects, {1 + objects} S3 requests"


def test_verify_names_deleted_and_copied_objects_and_removed_dead_letters(
    stack, new_topic, spark, s3, dynamodb, connector, tmp_path, capsys
):
    # given one partition in files of 5 records with a bad record at offset 13, dead-lettered to an S3 prefix:
    # objects at 0, 5, 10 (10..15 but 13), 16, 21; offsets 26..29 not written yet
    config = connector(**{"flush.size": 5, "errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "dlq"})
    topic = new_topic(config, 1)
    produce(
        stack.bootstrap_servers,
        topic,
        [b"{not json" if i == 13 else json.dumps({"n": i}).encode() for i in range(30)],
        1,
    )
    run_job(config, spark, dynamodb)
    assert verify(config, tmp_path, capsys)[0] == 0
    folder = f"topics/{topic}/partition=0/{topic}+0+"
    letter = f"dlq/{topic}/partition=0/{topic}+0+0000000013.json"
    held = {key: s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in (f"{folder}0000000005.json", letter)}
    # when an object is deleted, then its offsets are named
    s3.delete_object(Bucket=BUCKET, Key=f"{folder}0000000005.json")
    code, out = verify(config, tmp_path, capsys)
    assert code == 1 and f"GAP {topic}-0 offsets 5..9: offsets 5..9 in no object or dead letter" in out, out
    s3.put_object(Bucket=BUCKET, Key=f"{folder}0000000005.json", Body=held[f"{folder}0000000005.json"])
    # when an object is copied under another start offset, then the offsets held twice are named
    s3.copy_object(
        Bucket=BUCKET, Key=f"{folder}0000000002.json", CopySource={"Bucket": BUCKET, "Key": f"{folder}0000000000.json"}
    )
    code, out = verify(config, tmp_path, capsys)
    assert code == 1 and f"OVERLAP {topic}-0 offsets 2..4: {folder}0000000000.json holds 5 records" in out, out
    s3.delete_object(Bucket=BUCKET, Key=f"{folder}0000000002.json")
    # when the dead letter is removed, then the missing letter and the span it was in are named
    s3.delete_object(Bucket=BUCKET, Key=letter)
    code, out = verify(config, tmp_path, capsys)
    assert code == 1 and "1 of the 1 committed dead letters are missing" in out, out
    assert f"GAP {topic}-0 offsets 10..15: 1 of the offsets 10..15 in no object or dead letter" in out, out
    # and with everything back, it passes again
    s3.put_object(Bucket=BUCKET, Key=letter, Body=held[letter])
    assert verify(config, tmp_path, capsys)[0] == 0


def test_verify_accounts_for_ignored_tombstones_counted_by_the_commits(
    stack, new_topic, spark, s3, dynamodb, connector, tmp_path, capsys
):
    # given tombstones at offsets 3, 8 and 14, ignored (behavior.on.null.values=ignore), written in two runs
    config = connector(**{"flush.size": 5, "behavior.on.null.values": "ignore"})
    topic = new_topic(config, 1)
    values = [None if i in (3, 8, 14) else json.dumps({"n": i}).encode() for i in range(19)]
    produce(stack.bootstrap_servers, topic, values[:12], 1)
    run_job(config, spark, dynamodb)
    produce(stack.bootstrap_servers, topic, values[12:], 1)
    run_job(config, spark, dynamodb)
    # then the commits counted them, and kept where the partition began
    (commit,) = committed(dynamodb, config).values()
    assert (commit.next_offset, commit.skipped, commit.first_offset) == (18, {"ignored": 3}, 0)
    # and verify proves the objects 0 (0..5), 6 (6..11) and 12 (12..17) and the 3 skipped offsets cover 0..17
    code, out = verify(config, tmp_path, capsys)
    assert code == 0 and f"{topic}-0" in out and " proven " in out, out
    # when the object at 6 is deleted, then verify cannot place the 5 missing offsets among the skipped ones,
    # and names both spans that lack some
    s3.delete_object(Bucket=BUCKET, Key=f"topics/{topic}/partition=0/{topic}+0+0000000006.json")
    code, out = verify(config, tmp_path, capsys)
    assert code == 1 and f"GAP {topic}-0 offsets 0..11: 7 of the offsets 0..11" in out, out
    assert "in all 8 offsets lack one, the commits skipped 3: 5 missing" in out, out


def test_verify_reads_the_dead_letter_topic_with_kafka(
    stack, new_topic, spark, s3, dynamodb, connector, unique, tmp_path, capsys
):
    # given bad records at offsets 2 and 7 dead-lettered to a topic
    config = connector(
        **{
            "flush.size": 4,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": f"dlq-{unique}",
            "errors.deadletterqueue.topic.replication.factor": 1,
        }
    )
    topic = new_topic(config, 1)
    produce(
        stack.bootstrap_servers,
        topic,
        [b"{not json" if i in (2, 7) else json.dumps({"n": i}).encode() for i in range(12)],
        1,
    )
    run_job(config, spark, dynamodb)
    # when verify runs without Kafka, then the committed count stands in for the letters; with it, they are placed
    code, out = verify(config, tmp_path, capsys)
    assert code == 0 and f"{topic}-0" in out, out
    code, out = verify(config, tmp_path, capsys, "--kafka")
    rows = [line.split() for line in out.splitlines() if line.startswith(topic)]
    assert code == 0 and [(row[1], row[4]) for row in rows] == [("0..9", "2")], out
    # and an object deleted is still named by its offsets
    s3.delete_object(Bucket=BUCKET, Key=f"topics/{topic}/partition=0/{topic}+0+0000000000.json")
    code, out = verify(config, tmp_path, capsys, "--kafka")
    assert code == 1, out
    assert (
        f"GAP {topic}-0 offsets 0..4: 4 of the offsets 0..4 in no object or dead letter (before the first "
        "object)" in out
    ), out
