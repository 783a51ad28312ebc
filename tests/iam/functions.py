"""Invoke a Lambda handler in-process as Lambda would run it: the environment the stack deploys for the function
(from the template), the function's role credentials, its service objects built afresh, calls recorded."""

from __future__ import annotations

import importlib
from contextlib import contextmanager

import pytest

from tests.iam.acting import acting_as
from tests.iam.deployment import Deployed
from tests.iam.recorder import CallLog
from tests.iam.world import Principal
from tests.lambdas.conftest import LambdaContext  # noqa: F401 (the context handlers get, here too)

HANDLERS = {
    "admin": "lambdas.admin.handler.handler",
    "trigger": "lambdas.trigger.handler.handler",
    "replay": "lambdas.dlq_replay.handler.handler",
}
RUNTIME_ENV = {"POWERTOOLS_TRACE_DISABLED": "1"}  # no X-Ray daemon here


@contextmanager
def as_function(deployed: Deployed, principal: Principal, handler: str, log: CallLog | None):
    """Yields the handler function (`lambdas.<name>.handler.handler`). Every cached function of the handler's module
    (its service, its clients) is cleared before and after, so that nothing built as this principal, against this
    stack's endpoint, outlives the call (a later test would reach a stopped server through it)."""
    module = importlib.import_module(handler.rsplit(".", 1)[0])
    cached = [f for f in vars(module).values() if callable(getattr(f, "cache_clear", None))]
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {**deployed.environment(handler), **RUNTIME_ENV}.items():
            patch.setenv(name, value)
        with acting_as(principal, log):
            for function in cached:
                function.cache_clear()
            try:
                yield module.handler
            finally:
                for function in cached:
                    function.cache_clear()
