"""Replay: after the cause is fixed, dead letters go back to Kafka once and land in S3 once."""

from __future__ import annotations

import json

import pytest

from sink_engine import cli
from sink_engine.dlq.replay import replay
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.driver.job import run_job
from tests.conftest import BUCKET
from tests.dlq_corpus import corpus, produce_samples, raw_config, read_dlq_s3, read_topic
from tests.s3_reader import landed_records


def end_offset(bootstrap: str, topic: str) -> int:
    return len(read_topic(bootstrap, topic))


def dead_letters(stack, s3, config) -> list[tuple]:
    """(original offset, value, error class) of every dead letter of the connector, from its destination."""
    if config["errors.deadletterqueue.s3.prefix"]:
        lines = read_dlq_s3(s3, BUCKET, f"{config['errors.deadletterqueue.s3.prefix']}/{config['topics'][0]}/")
        return sorted((d["offset"], d["value"], d["error"]["class"]) for d in lines)
    records = read_topic(stack.bootstrap_servers, config["errors.deadletterqueue.topic.name"])
    sources = [(json.loads(dict(r["headers"])["__sink_engine.dlq.source"]), r["value"]) for r in records]
    return sorted((source["offset"], value, source["error_class"]) for source, value in sources)


@pytest.mark.parametrize("destination", ["s3", "topic"])
def test_fixed_cause_then_replay_lands_each_dead_letter_once(
    stack, new_topic, spark, s3, dynamodb, connector, unique, tmp_path, capsys, destination
):
    # given the corpus dead-lettered by a connector that reads JSON
    settings = {
        "flush.size": 1,
        "errors.tolerance": "all",
        **(
            {"errors.deadletterqueue.s3.prefix": "replay-dlq"}
            if destination == "s3"
            else {
                "errors.deadletterqueue.topic.name": f"replay-dlq-{unique}",
                "errors.deadletterqueue.topic.replication.factor": 1,
            }
        ),
    }
    config = connector(**settings)
    topic = new_topic(config, 1)
    samples = corpus(0)
    produce_samples(stack.bootstrap_servers, topic, {0: samples})
    run_job(config, spark, dynamodb)
    assert len(dead_letters(stack, s3, config)) == 5
    # when the cause is fixed (the topic's values are text, not JSON) and a dry run looks first
    fixed = connector(
        **settings,
        **{"value.converter": "org.apache.kafka.connect.storage.StringConverter", "behavior.on.null.values": "ignore"},
    )
    payload = {"connector": config.name, "filters": {"error_classes": ["ConversionError"]}}
    fixed_settings = DeadLetterSettings.from_config(fixed)
    dry = replay(fixed_settings, request_from_payload({**payload, "dry_run": True}, fixed_settings), dynamodb, s3)
    # then it finds the four conversion failures and changes nothing
    assert dry.to_dict()["found"] == {"ConversionError": 4} and dry.to_dict()["totals"]["replayed"] == 4
    assert end_offset(stack.bootstrap_servers, topic) == 11
    # when the replay runs through the CLI, twice
    config_file = tmp_path / "fixed.json"
    config_file.write_text(json.dumps({"name": fixed.name, "config": raw_config(fixed)}))
    argv = ["dlq", "replay", "--config", str(config_file), "--error-class", "ConversionError"]
    assert cli.main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert cli.main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    # then the first produced the four records once, the second none
    assert first["replayed"] == {"ConversionError": 4} and first["totals"]["already_replayed"] == 0
    assert second["replayed"] == {} and second["already_replayed"] == {"ConversionError": 4}
    assert end_offset(stack.bootstrap_servers, topic) == 15
    # when the fixed connector runs
    run_job(fixed, spark, dynamodb)
    # then the three that are text now landed once, after the six good JSON records, and the value that is
    # not even text is dead-lettered again, once, at its new offset
    values = landed_records(s3, topic)
    assert [v["n"] for v in values[:6]] == [0, 1, 2, 3, 4, 5]
    assert sorted(values[6:]) == sorted(["{not json", "[1, 2", "{" + "x" * (3 * 1024 * 1024)])
    again = [d for d in dead_letters(stack, s3, config) if d[0] >= 11]
    assert again == [(14, b"\xff\xfe\xfd", "ConversionError")]
