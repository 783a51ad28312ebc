"""Lost answers to the lease's conditional writes: the SDK retries the write, the retry meets what its own first
try wrote, and the run must recognise itself instead of reporting another run (exit 3) or a lost lease."""

from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from sink_engine.driver.job import now_ms
from sink_engine.offsets import Leases
from tests.conftest import TABLE
from tests.faults.aws_scenario import SMALL, assert_complete, expected_commits, landed, prepare, record_figures, run_cli
from tests.runs import lapse_lease


@pytest.mark.parametrize(
    "operation, times",
    [
        ("PutItem", 1),  # the acquisition
        pytest.param("UpdateItem", 3, marks=pytest.mark.fault_matrix),  # renewals and the release
    ],
    ids=["acquire", "renew-release"],
)
def test_a_lost_answer_to_a_lease_write_is_recognised_as_our_own(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, operation, times
):
    config = prepare(stack, connector, SMALL, **{"sink.lease.duration.ms": 1500})
    # given DynamoDB applies the lease writes but their answers never come back
    aws_faults.add(Rule("drop_after", "dynamodb", operation, where='"LEASE"', times=times))
    # when the run takes, renews and releases its lease
    run = run_cli(config, tmp_path)
    # then it recognised its own writes: it did the work and let the lease go
    assert run.code == 0, run
    assert aws_faults.injected["drop_after"] == times
    state = landed(s3, dynamodb, config)
    assert_complete(state, expected_commits(SMALL, config))
    assert Leases(dynamodb, TABLE, now_ms).describe(config.name)["expires_at_ms"] == 0
    record_figures(figures, aws_faults, [run], state)


@pytest.mark.fault_matrix
def test_a_release_that_fails_for_good_leaves_a_successful_run_successful(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, monkeypatch
):
    config = prepare(stack, connector, SMALL, **{"sink.lease.duration.ms": 1500})
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")
    # given DynamoDB throttles every update of the lease (renewals and the release) past the SDK's retries
    aws_faults.add(Rule("throttle", "dynamodb", "UpdateItem", where='"LEASE"'))
    run = run_cli(config, tmp_path)
    # then the run that committed its work still succeeds; its lease lapses by itself
    assert run.code == 0, run
    state = landed(s3, dynamodb, config)
    assert_complete(state, expected_commits(SMALL, config))
    lease = Leases(dynamodb, TABLE, now_ms).describe(config.name)
    assert 0 < lease["expires_at_ms"] <= now_ms() + config["sink.lease.duration.ms"]
    aws_faults.clear_rules()
    lapse_lease(dynamodb, config)  # as it does within the lease period
    rerun = run_cli(config, tmp_path)
    assert rerun.code == 0, rerun
    record_figures(figures, aws_faults, [run, rerun], landed(s3, dynamodb, config))
