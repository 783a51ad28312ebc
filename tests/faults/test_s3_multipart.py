"""Faults on each step of a streamed multipart upload (create, part, complete): passing faults are absorbed by the
retries; a step that fails for good fails the run (exit 1, naming the object), commits nothing of its range and
leaves no incomplete upload behind; a rerun after the faults stop writes every record once."""
from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from tests.faults.aws_scenario import (
    LARGE, assert_complete, assert_safe, expected_commits, landed, prepare, record_figures, run_cli,
)


def test_a_completion_that_fails_for_good_is_aborted(stack, spark, s3, dynamodb, connector, aws_faults, figures,
                                                     tmp_path):
    config = prepare(stack, connector, LARGE)
    # given S3 answers every CompleteMultipartUpload with a 500
    aws_faults.add(Rule("internal", "s3", "CompleteMultipartUpload"))
    # when the run writes its files
    failed = run_cli(config, tmp_path)
    # then it fails naming the object, commits nothing, and aborted the uploads it could not complete
    assert failed.code == 1, failed
    assert "CompleteMultipartUpload" in failed.err and f"topics/{config['topics'][0]}/" in failed.err
    state = landed(s3, dynamodb, config)
    assert_safe(state)
    assert set(state["commits"].values()) == {0} and state["leftover_uploads"] == 0, state
    # and once S3 completes uploads again, a rerun writes every record once
    aws_faults.clear_rules()
    rerun = run_cli(config, tmp_path)
    assert rerun.code == 0, rerun
    final = landed(s3, dynamodb, config)
    assert_complete(final, expected_commits(LARGE, config))
    record_figures(figures, aws_faults, [failed, rerun], final)
