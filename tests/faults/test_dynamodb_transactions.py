"""Lost answers to the commit and plan transactions: a retry that meets its own commit is recognised (the run goes
on, exit 0); a commit whose every try was lost says whether it committed, and a rerun after the faults stop
finishes the work exactly once."""

from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from tests.faults.aws_scenario import (
    SMALL,
    assert_complete,
    assert_safe,
    expected_commits,
    landed,
    prepare,
    record_figures,
    run_cli,
)
from tests.runs import lapse_lease

WALL_CLOCK = {"rotate.schedule.interval.ms": 3_600_000}  # plans are recorded before the tasks run


@pytest.mark.parametrize(
    "where, settings",
    [
        ('"OFFSET#', {}),
        pytest.param('"PLAN#', WALL_CLOCK, marks=pytest.mark.fault_matrix),
    ],
    ids=["commit", "plan"],
)
def test_a_retried_transaction_that_meets_its_own_write_goes_on(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, where, settings
):
    # (with the wall-clock rotation, the planned cut closes every file at the end of the range)
    config = prepare(stack, connector, SMALL, **settings)
    # given DynamoDB applies the first commit (or plan) transaction but its answer never comes back
    aws_faults.add(Rule("drop_after", "dynamodb", "TransactWriteItems", where=where, times=1))
    # when the run commits
    run = run_cli(config, tmp_path)
    # then it saw that its own retry met its own write: every partition committed, once
    assert run.code == 0, run
    assert aws_faults.injected["drop_after"] == 1
    state = landed(s3, dynamodb, config)
    everything = {p: SMALL["per_partition"] for p in range(SMALL["partitions"])}
    assert_complete(state, everything if settings else expected_commits(SMALL, config))
    record_figures(figures, aws_faults, [run], state)


@pytest.mark.parametrize(
    "kind, committed",
    [
        ("drop_after", True),
        ("drop_before", False),
        pytest.param("throttle", False, marks=pytest.mark.fault_matrix),
        pytest.param("internal", False, marks=pytest.mark.fault_matrix),
    ],
)
def test_a_commit_whose_answers_are_all_lost_says_what_happened(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, monkeypatch, kind, committed
):
    config = prepare(stack, connector, SMALL)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")  # the SDK's retries, kept short
    # given every commit transaction fails: its answer lost after DynamoDB applied it, or it never got there
    # (dropped, throttled, a 500)
    aws_faults.add(Rule(kind, "dynamodb", "TransactWriteItems", where='"OFFSET#'))
    run = run_cli(config, tmp_path)
    state = landed(s3, dynamodb, config)
    assert_safe(state)
    if committed:
        # then a commit that was applied is known to be: the run goes on and finishes
        assert run.code == 0, run
        assert_complete(state, expected_commits(SMALL, config))
        runs = [run]
    else:
        # then the run fails saying the commit did not happen, and a rerun after the faults stop finishes
        assert run.code == 1, run
        assert "was not committed" in run.err and "read back" in run.err, run.err
        assert state["commits"] == {}, state
        aws_faults.clear_rules()
        rerun = run_cli(config, tmp_path)
        assert rerun.code == 0, rerun
        state = landed(s3, dynamodb, config)
        assert_complete(state, expected_commits(SMALL, config))
        runs = [run, rerun]
    record_figures(figures, aws_faults, runs, state)


@pytest.mark.fault_matrix
def test_a_failed_commit_is_reported_even_when_the_lease_release_fails_too(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, monkeypatch
):
    config = prepare(stack, connector, SMALL)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")
    # given DynamoDB takes neither commits nor lease updates (renewals, the release)
    aws_faults.add(
        Rule("drop_before", "dynamodb", "TransactWriteItems", where='"OFFSET#'),
        Rule("drop_before", "dynamodb", "UpdateItem", where='"LEASE"'),
    )
    run = run_cli(config, tmp_path)
    # then the run reports the commit, not the release that failed after it; its lease lapses
    assert run.code == 1, run
    assert "was not committed" in run.err, run.err
    assert_safe(landed(s3, dynamodb, config))
    aws_faults.clear_rules()
    lapse_lease(dynamodb, config)
    rerun = run_cli(config, tmp_path)
    assert rerun.code == 0, rerun
    state = landed(s3, dynamodb, config)
    assert_complete(state, expected_commits(SMALL, config))
    record_figures(figures, aws_faults, [run, rerun], state)


def test_a_commit_cancelled_by_a_concurrent_write_is_sent_again(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path
):
    config = prepare(stack, connector, SMALL)
    # given DynamoDB cancels the first two commit transactions with TransactionConflict, as it does when the run's
    # own lease renewal touches the lease item that every commit checks (moto never does)
    aws_faults.add(Rule("txn_conflict", "dynamodb", "TransactWriteItems", where='"OFFSET#', times=2))
    # when the run commits
    run = run_cli(config, tmp_path)
    # then the commits were sent again and went through: exit 0, every partition committed once
    assert run.code == 0, run
    assert aws_faults.injected["txn_conflict"] == 2
    state = landed(s3, dynamodb, config)
    assert_complete(state, expected_commits(SMALL, config))
    record_figures(figures, aws_faults, [run], state)
