"""Running the job in tests: a run that dies at a failpoint, two runs started at once, and what runs committed."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from sink_engine import cli
from sink_engine.driver.job import now_ms, run_job
from sink_engine.failpoints import ENV_VAR, SimulatedCrash
from sink_engine.model import CommittedOffset
from sink_engine.offsets import Leases, LeaseToken, OffsetStore
from tests.conftest import TABLE


def past_the_lease(config) -> Callable[[], int]:
    """A clock a lease period and a second ahead. A run given it finds the lease a crashed run left (renewed at the
    latest when it crashed) lapsed, as a run started once the lease period is over would, since a lease's expiry is
    judged with the clock of the run that takes it (docs/faults.md, "Clocks"): no test sleeps the lease out."""
    ahead = config["sink.lease.duration.ms"] + 1000
    return lambda: now_ms() + ahead


def lapse_lease(dynamodb, config) -> None:
    """Move the connector's lease expiry to now, as its lapse would (for runs through the command line, whose clock
    a test does not set): the next run takes the lease with the epoch + 1."""
    leases = Leases(dynamodb, TABLE, now_ms)
    held = leases.describe(config.name)
    assert held and leases.renew(LeaseToken(config.name, held["owner"], held["epoch"]), 0), held


def crash_at(failpoint: str, config, spark, dynamodb, **run_kwargs) -> None:
    """Run the job with `failpoint` armed and check that it died there; the failpoint is disarmed after."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_VAR, failpoint)
        with pytest.raises(SimulatedCrash):
            run_job(config, spark, dynamodb, **run_kwargs)


def rewritten_after_crash(config, spark, dynamodb, s3, prefix: str) -> tuple[dict, dict]:
    """A run that dies after its uploads (before any commit), its objects under `prefix` then deleted, and the job
    run again past the dead run's lease (`past_the_lease`): (the crashed run's objects, the rerun's), key ->
    bytes."""
    from tests.conftest import BUCKET
    from tests.s3_reader import object_bodies

    crash_at("after_upload_before_commit", config, spark, dynamodb)
    crashed = object_bodies(s3, BUCKET, prefix)
    if crashed:
        s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": k} for k in crashed]})
    run_job(config, spark, dynamodb, clock=past_the_lease(config))
    return crashed, object_bodies(s3, BUCKET, prefix)


def two_runs_at_once(config_file) -> list[int]:
    """`sink-engine run` twice on the same connector file, started at the same moment in two threads: the exit
    codes, sorted."""
    codes, start = [], threading.Barrier(2)

    def run():
        start.wait()
        codes.append(cli.main(["run", "--config", str(config_file)]))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(codes)


def committed(dynamodb, config) -> dict[int, CommittedOffset]:
    """The connector's commits by partition of its (single) topic."""
    return {tp.partition: c for tp, c in OffsetStore(dynamodb, TABLE, now_ms).committed(config.name).items()}


def committed_offsets(dynamodb, config) -> dict[int, int]:
    """The next offset to read, by partition."""
    return {partition: c.next_offset for partition, c in committed(dynamodb, config).items()}
