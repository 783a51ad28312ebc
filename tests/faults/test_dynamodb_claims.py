"""Lost answers to the claims of the dead-letter replay and of the trigger: each claim's retry meets its own first
try and must count as claimed by this invocation, so a record is replayed once (not reported in doubt) and a
run starts once."""

from __future__ import annotations

import boto3
import pytest

from devtools.faults.aws_proxy import Rule
from devtools.producer import produce
from lambdas.trigger.batches import BatchStarter
from lambdas.trigger.connectors import Connector
from lambdas.trigger.rules import Rotation
from lambdas.trigger.runs import Backoff, JobSpec, Outcome, RunStarter
from lambdas.trigger.sizing import Capacity
from lambdas.trigger.state import TriggerState
from sink_engine.dlq.replay import replay
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.driver.job import run_job
from tests.conftest import TABLE
from tests.dlq_corpus import read_topic

BAD = [b"{not json", b"[1, 2", b"\xff\xfe", b'{"n": ', b"nope"]


def test_a_replay_claim_whose_answer_was_lost_is_replayed_once(
    stack, new_topic, spark, s3, dynamodb, connector, aws_faults, figures, unique
):
    config = connector(**{"flush.size": 1, "errors.tolerance": "all", "errors.deadletterqueue.s3.prefix": "claims-dlq"})
    topic, target = config["topics"][0], f"replayed-{unique}"
    new_topic(topic, 1)
    new_topic(target, 1)
    values = [value for bad in BAD for value in (bad, b'{"good": true}')]
    produce(stack.bootstrap_servers, topic, values, 1)
    run_job(config, spark, dynamodb)  # no faults yet: five dead letters in S3
    # given DynamoDB applies every other replay claim but loses its answer
    aws_faults.add(Rule("drop_after", "dynamodb", "PutItem", where='"REPLAY#', probability=0.5))
    payload = {"connector": config.name, "target": {"topic": target}}
    clients = boto3.client("dynamodb"), boto3.client("s3")  # through the proxy
    # when the dead letters are replayed
    settings = DeadLetterSettings.from_config(config)
    summary = replay(settings, request_from_payload(payload, settings), *clients).to_dict()
    # then each was claimed by this invocation and replayed once, none is in doubt
    assert aws_faults.injected["drop_after"] >= 1, "the seed lost no claim: pick another"
    assert summary["totals"] == {"found": 5, "replayed": 5, "already_replayed": 0, "in_doubt": 0}, summary
    assert sorted(r["value"] for r in read_topic(stack.bootstrap_servers, target)) == sorted(BAD)
    figures.update(faults=dict(aws_faults.injected), runs=1, exit_codes=[0], records=len(BAD), duplicates=0, missing=0)


@pytest.mark.fault_matrix
def test_a_trigger_claim_whose_answer_was_lost_starts_one_run(stack, aws_faults, figures, unique):
    emr = boto3.client("emr-serverless")
    application = emr.create_application(name=f"faults-{unique}", releaseLabel="emr-7.12.0", type="SPARK")
    job = JobSpec(
        application["applicationId"],
        "s3://assets/entrypoint.py",
        "--conf spark.executor.cores=1",
        60,
        Capacity(16, 64, 200),
    )
    state = TriggerState(boto3.client("dynamodb"), TABLE)
    starter = RunStarter(state, emr, job, claim_ms=900_000, backoff=Backoff(60_000, 3_600_000))
    batches = BatchStarter(state, emr, job)

    def start(*args, **kwargs):  # the trigger's way: claim, then start the claimed run (a run of one connector)
        ready = starter.prepare(*args, **kwargs)
        return ready if isinstance(ready, Outcome) else batches.start([ready])[ready.connector.name]

    rotation = Rotation.from_entry(
        "c",
        {
            "flush.size": 100,
            "rotate.schedule.interval.ms": -1,
            "rotate.interval.ms": -1,
            "timestamp.extractor": "record",
            "timezone": "UTC",
        },
    )
    connector = Connector(
        f"trigger-{unique}", ("orders",), "s3://lake/c.json", rotation, "arn:aws:iam::123456789012:role/job"
    )
    # given DynamoDB applies the run claim (a conditional put) and, later, its settlement, losing both answers
    aws_faults.add(
        Rule("drop_after", "dynamodb", "PutItem", where='"RUN"', times=1),
        Rule("drop_after", "dynamodb", "UpdateItem", where="outcome", times=1),
    )
    # when the trigger starts a run, and is asked for another once that run ended (moto's runs end at once; as this
    # one took no lease it is settled as failed, so the second is forced past the backoff)
    first = start(connector, "flush-size", 1_000, 0)
    second = start(connector, "forced", 2_000, 0, forced=True)
    # then the first claim counted as its own (one run started), and the settled claim let the next run start
    assert first.action == "started" and first.job_run_id, first
    assert second.action == "started", second
    runs = emr.list_job_runs(applicationId=application["applicationId"])["jobRuns"]
    assert len(runs) == 2 and aws_faults.injected["drop_after"] == 2
    figures.update(faults=dict(aws_faults.injected), runs=2, exit_codes=["started", "started"])
