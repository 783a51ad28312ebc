"""Dead-letter objects in S3 are written once and never changed: a zombie attempt that saw fewer records cannot
shrink a committed object, a rerun that saw more records adds the rest beside what a crashed attempt wrote, and a
put whose answer was lost recognises its own object. Readers (and the replay) see each dead letter once."""

from __future__ import annotations

import orjson
import pytest

from devtools.faults.aws_proxy import Rule
from devtools.producer import produce
from sink_engine.dlq.letter import STAGE_VALUE_CONVERTER, DeadLetter
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.replay_sources import from_s3
from sink_engine.dlq.s3_destination import S3Destination
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.driver.job import now_ms, run_job
from sink_engine.errors import CommitConflictError
from sink_engine.model import PartitionRange
from sink_engine.offsets import Leases, OffsetStore
from sink_engine.run.committer import commit_results
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task.settings import TaskSettings
from tests.conftest import BUCKET, TABLE
from tests.dlq_corpus import read_dlq_s3
from tests.faults.aws_scenario import run_cli
from tests.runs import committed_offsets, crash_at, past_the_lease
from tests.s3_reader import list_keys, object_bodies


def produce_with_bad(stack, topic: str, first: int, count: int) -> None:
    """Offsets first.. of partition 0; every offset ending in 5 is malformed JSON (a dead letter)."""
    values = [
        f"{{bad {o}".encode() if o % 10 == 5 else orjson.dumps({"p": 0, "n": o}) for o in range(first, first + count)
    ]
    produce(stack.bootstrap_servers, topic, values, 1)


def dead_letter_config(connector, prefix: str):
    return connector(
        **{
            "flush.size": 10,
            "errors.tolerance": "all",
            "errors.deadletterqueue.s3.prefix": prefix,
            "sink.lease.duration.ms": 1000,
        }
    )


def dlq_prefix(config) -> str:
    return f"{config['errors.deadletterqueue.s3.prefix']}/{config['topics'][0]}/"


def dead_letter_offsets(s3, config) -> list[int]:
    """Every line of every dead-letter object (a duplicate would show twice)."""
    return sorted(line["offset"] for line in read_dlq_s3(s3, BUCKET, dlq_prefix(config)))


def replayed_offsets(s3, config) -> list[int]:
    settings = DeadLetterSettings.from_config(config)
    request = request_from_payload({"connector": config.name}, settings)
    return [letter.offset for letter in from_s3(settings, request, s3)]


def test_a_zombie_attempt_never_shrinks_a_committed_dead_letter_object(
    stack, new_topic, spark, s3, dynamodb, connector, figures
):
    config = dead_letter_config(connector, "zombie-dlq")
    topic = new_topic(config, 1)
    produce_with_bad(stack, topic, 0, 50)
    # given a run that took the lease and planned the 50 records there were, then stalled past its lease
    zombie = Leases(dynamodb, TABLE, now_ms).acquire(config.name, "zombie", 1000)
    zombie_range = PartitionRange(topic, 0, 0, 50, None)
    # and a newer run that took over once 100 records were there (its clock past the zombie's lease) and committed
    # them with their ten dead letters
    produce_with_bad(stack, topic, 50, 50)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    assert committed_offsets(dynamodb, config) == {0: 100}
    assert dead_letter_offsets(s3, config) == list(range(5, 100, 10))
    committed = object_bodies(s3, BUCKET, dlq_prefix(config))
    # when the zombie wakes up, writes its range (files and dead letters) and tries to commit
    result = run_range(TaskSettings.from_config(config), zombie_range)
    assert result.error is None and result.dead_letters == {"ConversionError": 4}
    with pytest.raises(CommitConflictError):
        commit_results(OffsetStore(dynamodb, TABLE, now_ms), zombie, [result])
    # then the committed dead-letter object is unchanged, every dead letter is there once, and the replay reads
    # each once
    assert object_bodies(s3, BUCKET, dlq_prefix(config)) == committed
    assert dead_letter_offsets(s3, config) == list(range(5, 100, 10))
    assert replayed_offsets(s3, config) == list(range(5, 100, 10))
    figures.update(runs=2, exit_codes=[0, 4], records=10, duplicates=0, missing=0)


def test_a_rerun_that_saw_more_records_writes_the_rest_beside_the_crashed_attempts_object(
    stack, new_topic, spark, s3, dynamodb, connector, figures
):
    config = dead_letter_config(connector, "rerun-dlq")
    topic = new_topic(config, 1)
    produce_with_bad(stack, topic, 0, 50)
    # given a run that wrote its files and dead letters (5, 15, 25, 35), then died before committing
    crash_at("after_upload_before_commit", config, spark, dynamodb)
    crashed = object_bodies(s3, BUCKET, dlq_prefix(config))
    assert len(crashed) == 1
    # when more records arrive and the rerun (from the same committed offset, past the dead run's lease) sees ten
    # dead letters
    produce_with_bad(stack, topic, 50, 50)
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    # then the crashed attempt's object is kept as it was, the rest went into an object of its own, and each
    # dead letter is there once
    keys = list_keys(s3, BUCKET, dlq_prefix(config))
    assert [key.rsplit("+", 1)[1] for key in keys] == ["0000000005.json", "0000000045.json"]
    assert {
        key: body for key, body in object_bodies(s3, BUCKET, dlq_prefix(config)).items() if key in crashed
    } == crashed
    assert dead_letter_offsets(s3, config) == list(range(5, 100, 10))
    assert replayed_offsets(s3, config) == list(range(5, 100, 10))
    figures.update(runs=2, exit_codes=[70, 0], records=10, duplicates=0, missing=0)


def test_the_replay_reads_a_source_offset_once_when_objects_overlap(s3, connector):
    """Objects overlap only when a rerun planned a shorter range than its crashed attempt (a lowered
    sink.run.max.records.per.partition): the crashed attempt's object runs past the rerun's commit point, and the
    next run's object starts inside it."""
    config = dead_letter_config(connector, "overlap-dlq")
    topic = config["topics"][0]

    def letter(offset):
        return DeadLetter(
            config.name,
            topic,
            0,
            offset,
            0,
            None,
            b"x",
            (),
            "ConversionError",
            STAGE_VALUE_CONVERTER,
            "bad",
        )

    destination = S3Destination.from_settings(DeadLetterSettings.from_config(config), uploader=None)
    crashed, next_run = [letter(o) for o in (5, 15, 25, 35)], [letter(o) for o in (25, 35, 45)]
    for key, body in destination.objects(crashed) + destination.objects(next_run):
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
    assert replayed_offsets(s3, config) == [5, 15, 25, 35, 45]


@pytest.mark.fault_matrix
def test_a_dead_letter_put_whose_answer_was_lost_recognises_its_own_object(
    stack, new_topic, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path
):
    config = dead_letter_config(connector, "lost-dlq")
    topic = new_topic(config, 1)
    produce_with_bad(stack, topic, 0, 100)
    # given S3 creates the dead-letter object but the answer is lost (the retry then finds the key taken)
    aws_faults.add(Rule("drop_after", "s3", "PutObject", where="/lost-dlq/", times=1))
    run = run_cli(config, tmp_path)
    # then the run read the object back, found its own dead letters, and committed
    assert run.code == 0, run
    assert aws_faults.injected["drop_after"] == 1
    assert committed_offsets(dynamodb, config) == {0: 100}
    assert dead_letter_offsets(s3, config) == list(range(5, 100, 10))
    figures.update(faults=dict(aws_faults.injected), runs=1, exit_codes=[0], records=10, duplicates=0, missing=0)
