"""Running the job in tests: a run that dies at a failpoint."""
from __future__ import annotations

import pytest

from sink_engine.failpoints import ENV_VAR, SimulatedCrash
from sink_engine.job import run_job


def crash_at(failpoint: str, config, spark, dynamodb, **run_kwargs) -> None:
    """Run the job with `failpoint` armed and check that it died there; the failpoint is disarmed after."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_VAR, failpoint)
        with pytest.raises(SimulatedCrash):
            run_job(config, spark, dynamodb, **run_kwargs)
