"""Passing DynamoDB faults on every call of a run (lease, offsets, plans, commits): throttling
(ProvisionedThroughputExceededException, ThrottlingException) and 500s, at seeded random requests, no more than the
SDK's retries (boto3's standard mode: 3 attempts). The run succeeds at once and commits every closed file exactly
once. Faults that outlast the retries: test_dynamodb_transactions.py."""

from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from tests.faults.aws_scenario import SMALL, assert_complete, landed, prepare, record_figures, run_cli

WALL_CLOCK = {"rotate.schedule.interval.ms": 3_600_000}  # plans too: every DynamoDB call of a run


@pytest.mark.parametrize(
    "kind",
    [
        "throttle",
        pytest.param("slowdown", marks=pytest.mark.fault_matrix),
        pytest.param("internal", marks=pytest.mark.fault_matrix),
    ],
)
def test_passing_dynamodb_faults_are_absorbed(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, kind
):
    config = prepare(stack, connector, SMALL, **WALL_CLOCK)
    # given a third of the connector's DynamoDB requests fail, two at most (even the same request's two retries)
    aws_faults.add(Rule(kind, "dynamodb", where=config.name, probability=0.33, times=2))
    run = run_cli(config, tmp_path)
    assert run.code == 0, run
    assert aws_faults.injected[kind] == 2, "the seed injected too little: pick another"
    state = landed(s3, dynamodb, config)
    assert_complete(state, {p: SMALL["per_partition"] for p in range(SMALL["partitions"])})
    record_figures(figures, aws_faults, [run], state)
