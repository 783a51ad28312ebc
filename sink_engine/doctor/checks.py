"""A doctor check: a name and a probe of one thing a run needs, giving a Result (ok, failed or skipped) with a
message that names what was reached or what failed.

A probe returns its ok message, or raises `Failed` / `Skipped` with its message. Whatever else it raises becomes
a failure too (a doctor reports, it does not crash): botocore's ClientError names the call, AWS's code and, when
access was denied, the IAM action and the job role's statement that grants it (`grants.describe`); the engine's
own errors (SinkError) their message; anything else its type and message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from sink_engine.doctor import grants
from sink_engine.errors import SinkError

if TYPE_CHECKING:  # the runner imports this module
    from sink_engine.config import SinkConfig
    from sink_engine.doctor.runner import Context

OK, FAILED, SKIPPED = "ok", "FAILED", "skipped"


@dataclass(frozen=True)
class Result:
    name: str
    status: str  # OK, FAILED or SKIPPED
    message: str

    @property
    def failed(self) -> bool:
        return self.status == FAILED


class Failed(Exception):
    """The probe found what a run would fail on; the message names it."""


class Skipped(Exception):
    """The probe does not apply, or cannot run because an earlier check failed; the message says which."""


@dataclass(frozen=True)
class Check:
    """`probe(context)` returns the ok message or raises (see the module docstring). `service`: the AWS service of
    its calls (names the IAM action of a denied call); `resource`: the resource its calls touch, for that message;
    `grantor`: who grants its actions when not the job role (a role the S3 client assumes); `applies(config)`:
    whether a run of that config needs what it probes (the runner leaves the others out)."""

    name: str
    probe: Callable[[Context], str]
    service: str = ""
    resource: str | None = None
    grantor: str | None = None
    applies: Callable[[SinkConfig], bool] = lambda config: True

    def __call__(self, context: Context) -> Result:
        """The probe's Result; its message on one line (AWS's messages may hold an XML body)."""
        status, message = self._outcome(context)
        return Result(self.name, status, " ".join(message.split()))

    def _outcome(self, context: Context) -> tuple[str, str]:
        try:
            return OK, self.probe(context)
        except Skipped as e:
            return SKIPPED, str(e)
        except Failed as e:
            return FAILED, str(e)
        except ClientError as e:
            return FAILED, grants.describe(e, self.service, self.resource, self.grantor)
        except BotoCoreError as e:
            return FAILED, f"AWS request failed: {e}"
        except SinkError as e:
            return FAILED, str(e)
        except Exception as e:  # noqa: BLE001 - a broken dependency is reported, never a traceback
            return FAILED, f"{type(e).__name__}: {e}"
