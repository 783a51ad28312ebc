"""Exactly-once behaviour of the backbone against the real broker, moto's server and local Spark."""

from __future__ import annotations

import orjson
import pytest

from devtools.producer import produce, produce_events
from sink_engine import cli
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.runs import committed_offsets, crash_at, past_the_lease, two_runs_at_once
from tests.s3_reader import landed_records, list_keys, object_bodies, read_json_lines


def test_exact_keys_and_content(new_topic, spark, s3, dynamodb, connector):
    # given 3 partitions with 250 events each and flush.size 100
    config = connector(**{"flush.size": 100})
    topic = new_topic(config, 3, events=750)
    # when one run
    summary = run_job(config, spark, dynamodb)
    # then two files of 100 per partition, named exactly as the Confluent connector names them
    expected = sorted(
        f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.json" for p in range(3) for start in (0, 100)
    )
    assert list_keys(s3, BUCKET, f"topics/{topic}/") == expected
    assert sorted(f.key for f in summary.files) == expected
    # and each file holds its partition's records in offset order, read back with the json module
    events = landed_records(s3, config["topics"][0])
    assert len(events) == 600
    assert [e["event_id"] for e in read_json_lines(s3, BUCKET, expected[0])] == list(range(0, 300, 3))
    # and the uncommitted tail (50 per partition) waits
    assert committed_offsets(dynamodb, config) == {0: 200, 1: 200, 2: 200}


def test_rerun_writes_nothing_new(new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 50})
    topic = new_topic(config, 2, events=200)
    run_job(config, spark, dynamodb)
    before = object_bodies(s3, BUCKET, f"topics/{topic}/")
    # when the run is repeated with no new data
    summary = run_job(config, spark, dynamodb)
    # then nothing is written and nothing changes
    assert summary.files == []
    assert object_bodies(s3, BUCKET, f"topics/{topic}/") == before
    assert committed_offsets(dynamodb, config) == {0: 100, 1: 100}


def test_crash_after_upload_then_rerun_gives_each_record_once(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 40, "sink.lease.duration.ms": 1500})
    topic = new_topic(config, 3, events=360)
    # given a run that dies after its uploads and before any commit
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {}
    crashed = object_bodies(s3, BUCKET, f"topics/{topic}/")
    assert len(crashed) == 9
    # when more data arrives and the job runs again past the dead run's lease (its clock a lease period ahead)
    produce_events(stack.bootstrap_servers, topic, 120, 3, first_id=360)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then the crashed run's objects were rewritten byte for byte and every record is there once, no gaps
    after = object_bodies(s3, BUCKET, f"topics/{topic}/")
    assert {k: after[k] for k in crashed} == crashed
    ids = sorted(e["event_id"] for e in landed_records(s3, config["topics"][0]))
    assert ids == list(range(480))
    assert committed_offsets(dynamodb, config) == {0: 160, 1: 160, 2: 160}


def test_crash_between_partition_commits_then_rerun(new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 25, "sink.lease.duration.ms": 1500})
    new_topic(config, 2, events=100)
    crash_at("after_first_commit", config, spark, dynamodb)
    assert committed_offsets(dynamodb, config) == {0: 50}
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert sorted(e["event_id"] for e in landed_records(s3, config["topics"][0])) == list(range(100))
    assert committed_offsets(dynamodb, config) == {0: 50, 1: 50}


def test_concurrent_runs_have_one_winner(new_topic, spark, s3, dynamodb, connector, tmp_path):
    config_file = tmp_path / "connector.json"
    config = connector(**{"flush.size": 30})
    topic = config["topics"][0]
    config_file.write_text(orjson.dumps({"name": config.name, "config": _raw(config)}).decode())
    new_topic(topic, 3, events=270)
    # when two runs start at the same moment
    codes = two_runs_at_once(config_file)
    # then exactly one succeeds, the other exits non-zero (lease held) without committing
    assert codes == [0, 3]
    assert sorted(e["event_id"] for e in landed_records(s3, config["topics"][0])) == list(range(270))
    assert committed_offsets(dynamodb, config) == {0: 90, 1: 90, 2: 90}


def test_new_data_between_runs_continues_the_sequence(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 10})
    topic = new_topic(config, 1, events=25)
    run_job(config, spark, dynamodb)
    assert list_keys(s3, BUCKET, f"topics/{topic}/") == [
        f"topics/{topic}/partition=0/{topic}+0+{s:010d}.json" for s in (0, 10)
    ]
    # when 17 more records arrive: the waiting tail of 5 plus them make 22
    produce_events(stack.bootstrap_servers, topic, 17, 1, first_id=25)
    run_job(config, spark, dynamodb)
    # then the sequence continues at offset 20, and the last 2 records still wait
    assert list_keys(s3, BUCKET, f"topics/{topic}/") == [
        f"topics/{topic}/partition=0/{topic}+0+{s:010d}.json" for s in (0, 10, 20, 30)
    ]
    assert [e["event_id"] for e in landed_records(s3, config["topics"][0])] == list(range(40))
    assert committed_offsets(dynamodb, config) == {0: 40}


def test_uncommitted_tail_waits_for_more_records(stack, new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 1000})
    topic = new_topic(config, 2, events=300)
    summary = run_job(config, spark, dynamodb)
    assert summary.files == [] and list_keys(s3, BUCKET, f"topics/{topic}/") == []
    # the first start is pinned, nothing more
    assert committed_offsets(dynamodb, config) == {0: 0, 1: 0}
    produce_events(stack.bootstrap_servers, topic, 1800, 2, first_id=300)
    run_job(config, spark, dynamodb)
    assert sorted(e["event_id"] for e in landed_records(s3, config["topics"][0])) == list(range(2000))


def test_gzip_json_objects(new_topic, spark, s3, dynamodb, connector):
    config = connector(**{"flush.size": 20, "s3.compression.type": "gzip", "s3.compression.level": 9})
    topic = new_topic(config, 1, events=40)
    run_job(config, spark, dynamodb)
    assert list_keys(s3, BUCKET, f"topics/{topic}/") == [
        f"topics/{topic}/partition=0/{topic}+0+{s:010d}.json.gz" for s in (0, 20)
    ]
    assert [e["event_id"] for e in landed_records(s3, config["topics"][0])] == list(range(40))


@pytest.mark.parametrize(
    "converter, values, expected",
    [
        (
            "org.apache.kafka.connect.storage.StringConverter",
            [b"plain text", "caf\u00e9".encode()],
            ["plain text", "caf\u00e9"],
        ),
        ("org.apache.kafka.connect.converters.ByteArrayConverter", [b"\x00\xff", b"ab"], ["AP8=", "YWI="]),
    ],
)
def test_string_and_bytearray_converters(new_topic, spark, s3, dynamodb, connector, converter, values, expected):
    config = connector(**{"flush.size": 2, "value.converter": converter})
    new_topic(config, 1, values)
    run_job(config, spark, dynamodb)
    assert landed_records(s3, config["topics"][0]) == expected


def test_bad_json_fails_the_run_naming_the_record(stack, new_topic, spark, s3, dynamodb, connector, tmp_path, capsys):
    config = connector(**{"flush.size": 5})
    topic = new_topic(config, 1)
    good = [orjson.dumps({"n": i}) for i in range(12)]
    produce(stack.bootstrap_servers, topic, good[:7] + [b"{not json"] + good[7:], 1)
    config_file = tmp_path / "c.json"
    config_file.write_text(orjson.dumps(_raw(config) | {"name": config.name}).decode())
    # when the run meets the malformed value at offset 7
    code = cli.main(["run", "--config", str(config_file)])
    # then it fails naming topic, partition and offset, and nothing past it is committed
    assert code != 0
    assert f"record {topic}-0@7" in capsys.readouterr().err
    assert committed_offsets(dynamodb, config) == {0: 5}
    assert [e["n"] for e in landed_records(s3, config["topics"][0])] == [0, 1, 2, 3, 4]


def _raw(config) -> dict:
    """The config back as a flat connector map of the keys that were set."""
    values = {k: config[k] for k in config.explicit if k != "name"}
    return {k: ",".join(v) if isinstance(v, tuple) else v for k, v in values.items()}
