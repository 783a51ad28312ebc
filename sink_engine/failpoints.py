"""Failpoints for crash tests: `SINK_ENGINE_FAILPOINT=<name>` makes the run die at that point.

Names: `after_upload_before_commit` (all files uploaded, no offset committed),
`after_first_commit` (one topic-partition committed, the others not).
"""
from __future__ import annotations

import os

ENV_VAR = "SINK_ENGINE_FAILPOINT"
NAMES = ("after_upload_before_commit", "after_first_commit")


class SimulatedCrash(BaseException):
    """Raised at an armed failpoint. A BaseException so that no handler cleans up: the run dies as in a crash."""


def failpoint(name: str) -> None:
    """Die here if the environment arms this failpoint."""
    assert name in NAMES, name
    if os.environ.get(ENV_VAR) == name:
        raise SimulatedCrash(f"failpoint {name} triggered")
