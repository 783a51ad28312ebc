"""Seeded mixes of S3 and DynamoDB faults: each seed draws a few rules (step, kind, odds, how many), some beyond
what the retries absorb, and runs the connector until the faults are spent. Every run ends with exit 0, 1 (a
request failed for good) or 3 (a failed run's lease release was lost: it lapses), never 4 (no other run exists,
so a conflict would be a retry meeting its own write); after each, nothing is in S3 twice and nothing is
committed past S3; once the faults stop, a rerun finishes the work exactly once with no upload left behind."""

from __future__ import annotations

import os
import random

import pytest

from devtools.faults.aws_proxy import Rule
from tests.faults.aws_scenario import (
    MIXED,
    assert_complete,
    assert_safe,
    expected_commits,
    landed,
    prepare,
    record_figures,
    run_cli,
)
from tests.runs import lapse_lease

SEEDS = [int(os.environ["SEED"])] if os.environ.get("SEED") else [11, 22, 33, 44]
S3_STEPS = ("PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")
S3_KINDS = ("slowdown", "internal", "drop_before", "drop_after")
DYNAMODB_CALLS = ("GetItem", "PutItem", "UpdateItem", "Query", "TransactWriteItems")
DYNAMODB_KINDS = ("throttle", "internal", "drop_before", "drop_after")
FAULTED_RUNS = 4


def draw_rules(rand: random.Random, connector: str, topic_prefix: str) -> list[Rule]:
    """Two to four S3 rules and one or two DynamoDB rules. A lost CreateMultipartUpload answer is left out: the
    empty upload it leaves is the lifecycle rule's (test_s3_transient.py)."""
    rules = []
    for _ in range(rand.randint(2, 4)):
        step, kind = rand.choice(S3_STEPS), rand.choice(S3_KINDS)
        if (step, kind) == ("CreateMultipartUpload", "drop_after"):
            kind = "drop_before"
        rules.append(
            Rule(
                kind, "s3", step, where=topic_prefix, probability=rand.choice((0.2, 0.5, 0.9)), times=rand.randint(1, 8)
            )
        )
    for _ in range(rand.randint(1, 2)):
        rules.append(
            Rule(
                rand.choice(DYNAMODB_KINDS),
                "dynamodb",
                rand.choice(DYNAMODB_CALLS),
                where=connector,
                probability=rand.choice((0.2, 0.5)),
                times=rand.randint(1, 4),
            )
        )
    return rules


@pytest.mark.fault_matrix
@pytest.mark.parametrize("mix", SEEDS)
def test_a_seeded_mix_of_faults_never_loses_or_repeats_a_record(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, monkeypatch, mix
):
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "4")  # DynamoDB faults can outlast the SDK's retries too
    config = prepare(stack, connector, MIXED)
    rules = draw_rules(random.Random(mix), config.name, f"topics/{config['topics'][0]}/")
    aws_faults.reset(mix)
    aws_faults.add(*rules)
    runs = []
    for _ in range(FAULTED_RUNS):
        run = run_cli(config, tmp_path)
        runs.append(run)
        assert run.code in (0, 1, 3), (run, rules)
        assert_safe(landed(s3, dynamodb, config))
        if run.code == 0:
            break
        if run.code == 3:
            lapse_lease(dynamodb, config)
    aws_faults.clear_rules()
    if runs[-1].code != 0:
        runs.append(run_cli(config, tmp_path))
        assert runs[-1].code in (0, 3), runs[-1]
        if runs[-1].code == 3:  # the last faulted run's lease release was lost
            lapse_lease(dynamodb, config)
            runs.append(run_cli(config, tmp_path))
            assert runs[-1].code == 0, runs[-1]
    state = landed(s3, dynamodb, config)
    assert_complete(state, expected_commits(MIXED, config))
    record_figures(figures, aws_faults, runs, state)
    figures["scenario"] = f"mix seed {mix}: " + ", ".join(
        f"{r.service} {r.operation} {r.kind} x{r.times}" for r in rules
    )
