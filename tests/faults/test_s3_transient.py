"""Passing S3 faults on every upload step: 503 SlowDown, 500, throttling, connections dropped before the request
reached S3 and after S3 did the write (the answer lost). At most `s3.part.retries` faults are injected, at seeded
random requests of the step, so the retries absorb them: the run succeeds at once, every record lands once,
nothing is committed past S3 and no upload is left incomplete."""

from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from tests.faults.aws_scenario import (
    LARGE,
    SMALL,
    assert_complete,
    expected_commits,
    landed,
    leftover_uploads,
    prepare,
    record_figures,
    run_cli,
)

FAST = {("PutObject", "slowdown"), ("UploadPart", "drop_after")}  # in `make test`; the rest in `make test-faults`
CASES = [("PutObject", kind) for kind in ("slowdown", "internal", "throttle", "drop_before", "drop_after")] + [
    (step, kind)
    for step in ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")
    for kind in ("slowdown", "internal", "drop_before", "drop_after")
]


@pytest.mark.parametrize(
    "step, kind",
    [pytest.param(step, kind, marks=() if (step, kind) in FAST else pytest.mark.fault_matrix) for step, kind in CASES],
    ids=[f"{step}-{kind}" for step, kind in CASES],
)
def test_passing_faults_on_an_upload_step_are_absorbed(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, step, kind
):
    shape = SMALL if step == "PutObject" else LARGE
    config = prepare(stack, connector, shape)
    topic_prefix = f"topics/{config['topics'][0]}/"
    # given S3 fails up to s3.part.retries of the step's requests, each with even odds
    aws_faults.add(Rule(kind, "s3", step, where=topic_prefix, probability=0.5, times=config["s3.part.retries"]))
    run = run_cli(config, tmp_path)
    assert run.code == 0, run
    assert aws_faults.injected[kind] >= 1, "the seed injected nothing: pick another"
    state = landed(s3, dynamodb, config)
    # a Create whose answer was lost made an upload the run never learned of: the completion of its key aborts it
    assert leftover_uploads(s3, topic_prefix) == []
    record_figures(figures, aws_faults, [run], state)
    assert_complete(state, expected_commits(shape, config))
