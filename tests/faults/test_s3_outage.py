"""An S3 outage longer than the upload retries: the run gives up in bounded time (the retries' backoff, not the
outage's length), exits 1 naming the object it could not write, commits nothing past S3, and a rerun after the
outage writes every record once."""

from __future__ import annotations

import pytest

from devtools.faults.aws_proxy import Rule
from tests.conftest import BUCKET
from tests.faults.aws_scenario import (
    LARGE,
    SMALL,
    assert_complete,
    assert_safe,
    expected_commits,
    landed,
    leftover_uploads,
    prepare,
    record_figures,
    run_cli,
)

OUTAGE_S = 20.0
# s3.part.retries=3 with s3.retry.backoff.ms=200 waits at most 0.2 + 0.4 + 0.8 s per request; with Spark and the
# connections the run is given a generous bound, still well short of the outage
GIVES_UP_WITHIN_S = 12.0


@pytest.mark.fault_matrix
@pytest.mark.parametrize(
    "shape, skip",
    [
        (SMALL, 0),  # S3 is down from the run's first upload
        (LARGE, 4),  # S3 goes down mid-upload, parts in flight
    ],
    ids=["from-the-start", "mid-multipart"],
)
def test_an_outage_longer_than_the_retries_fails_the_run_in_bounded_time(
    stack, spark, s3, dynamodb, connector, aws_faults, figures, tmp_path, shape, skip
):
    config = prepare(stack, connector, shape)
    topic_prefix = f"topics/{config['topics'][0]}/"
    aws_faults.add(Rule("outage", "s3", where=topic_prefix, skip=skip, seconds=OUTAGE_S))
    failed = run_cli(config, tmp_path)
    assert failed.code == 1, failed
    assert failed.seconds < GIVES_UP_WITHIN_S, failed
    assert f"s3://{BUCKET}/{topic_prefix}" in failed.err and "failed" in failed.err, failed.err
    state = landed(s3, dynamodb, config)
    assert_safe(state)
    # uploads started before the outage could not be aborted during it (until the rerun completes their keys)
    stranded = leftover_uploads(s3, topic_prefix)
    files = shape["partitions"] * (shape["per_partition"] // config["flush.size"])
    assert len(stranded) == state["leftover_uploads"] <= (0 if skip == 0 else files), stranded
    aws_faults.clear_rules()
    rerun = run_cli(config, tmp_path)
    assert rerun.code == 0, rerun
    final = landed(s3, dynamodb, config)
    record_figures(figures, aws_faults, [failed, rerun], final)
    figures["exit_codes"] = [f"1 (gave up after {failed.seconds:.1f} s)", rerun.code]
    # the rerun's completion of each key aborted the uploads the outage stranded
    assert final["leftover_uploads"] == 0, (len(stranded), final)
    assert_complete(final, expected_commits(shape, config))
