"""A multipart upload step that fails for good (every try answered with a 500): the run fails naming the object,
commits nothing of the ranges it stopped, and leaves no incomplete upload behind (a failed part or completion
aborts the upload; a failed create leaves none); a rerun after the faults stop writes every record once."""

from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from tests.faults.aws_scenario import (
    LARGE,
    assert_complete,
    assert_safe,
    expected_commits,
    landed,
    prepare,
    record_figures,
    run_cli,
)


@pytest.mark.parametrize(
    "step",
    [
        "CompleteMultipartUpload",  # was never aborted (issue 14): in `make test`
        pytest.param("UploadPart", marks=pytest.mark.fault_matrix),
        pytest.param("CreateMultipartUpload", marks=pytest.mark.fault_matrix),
    ],
)
def test_a_step_that_fails_for_good_leaves_no_upload(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, step
):
    config = prepare(stack, connector, LARGE)
    # given S3 answers every request of the step with a 500
    aws_faults.add(Rule("internal", "s3", step))
    # when the run writes its files
    failed = run_cli(config, tmp_path)
    # then it fails naming the step and the object, commits nothing, and aborted what it had started
    assert failed.code == 1, failed
    assert step in failed.err and f"topics/{config['topics'][0]}/" in failed.err, failed.err
    state = landed(s3, dynamodb, config)
    assert_safe(state)
    assert set(state["commits"].values()) == {0} and state["leftover_uploads"] == 0, state
    # and once S3 answers again, a rerun writes every record once
    aws_faults.clear_rules()
    rerun = run_cli(config, tmp_path)
    assert rerun.code == 0, rerun
    final = landed(s3, dynamodb, config)
    assert_complete(final, expected_commits(LARGE, config))
    record_figures(figures, aws_faults, [failed, rerun], final)
