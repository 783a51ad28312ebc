"""A restore request the trigger started, followed until it is done: a restore longer than the job timeout goes on.

EMR Serverless cancels a job run past its `executionTimeoutMinutes` (infra/README.md, "Job timeout"), and a restore
has no bound of its own: a long one ends CANCELLED with work left. The restore confirms and checkpoints every
10,000 records (`RESTORED#` under `restore#<target topic>`, its `recorded_at_ms`: sink_engine/restore/lease.py) and
a rerun of the same request goes on from there, producing nothing twice. So the trigger keeps each restore it
started (`RESTORE#<request token>` under the connector: layout.py) with the checkpoint time it saw when its latest
attempt started, and on each idle-flush tick settles the attempts that ended:

- SUCCESS: the restore is done (`outcome` succeeded).
- FAILED or CANCELLED, and the checkpoint moved since the attempt started: the attempt made progress before it
  ended (the job timeout, a lost worker): the same request starts again (attempt n + 1, its own client token).
- FAILED or CANCELLED without progress: starting again would fail the same way (a refused call, a bad request):
  it stops there (`outcome` stopped; the run's failure was notified by the FailedJobRuns rule).
A refused StartJobRun (`start-failed`) changes nothing stored: the next tick tries again.

Only the tick writes after the first attempt: a new attempt's StartJobRun carries the token of (request, attempt), so
two ticks settling at once start one run, and the conditional update on `attempt` records it once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from lambdas.trigger.restore import RestoreRequest
from sink_engine.offsets import layout

if TYPE_CHECKING:
    from sink_engine.aws_types import DynamoDBClient

SUCCEEDED, STOPPED = "succeeded", "stopped"


@dataclass(frozen=True)
class RestoreRun:
    """A restore the trigger follows: the request (its `token` names it), when it was requested, the attempt under
    way, its job run, and the checkpoint's `recorded_at_ms` when that attempt started (0: none yet)."""

    token: str
    request: RestoreRequest
    requested_at: str
    attempt: int
    job_run_id: str
    checkpoint_at_ms: int

    def next_token(self) -> str:
        """StartJobRun's client token of the next attempt."""
        return hashlib.sha256(f"{self.token}#{self.attempt + 1}".encode()).hexdigest()[:64]


@dataclass(frozen=True)
class Settled:
    connector: str
    run: RestoreRun
    action: str  # succeeded | resumed | stopped | waiting | start-failed
    job_run_id: str | None = None  # the new attempt's, when resumed


class RestoreRuns:
    """The trigger's `RESTORE#` items in the offsets table, and the restores' checkpoints (read only)."""

    def __init__(self, dynamodb: DynamoDBClient, table: str) -> None:
        self._db, self._table = dynamodb, table

    def record(self, connector: str, run: RestoreRun) -> None:
        """Keep the first attempt of a restore (a retried invocation puts the same item again)."""
        self._db.put_item(
            TableName=self._table,
            Item={
                **layout.key(connector, layout.restore_run_sk(run.token)),
                "request": {"S": _dump(run.request)},
                "requested_at": {"S": run.requested_at},
                "attempt": {"N": str(run.attempt)},
                "job_run_id": {"S": run.job_run_id},
                "checkpoint_at_ms": {"N": str(run.checkpoint_at_ms)},
            },
        )

    def open_runs(self, connector: str) -> list[RestoreRun]:
        """The connector's restores that have no outcome yet."""
        return [
            RestoreRun(
                i[layout.SK]["S"].removeprefix(layout.RESTORE_RUN_PREFIX),
                _load(i["request"]["S"]),
                i["requested_at"]["S"],
                int(i["attempt"]["N"]),
                i["job_run_id"]["S"],
                int(i["checkpoint_at_ms"]["N"]),
            )
            for i in layout.items_under(self._db, self._table, connector, layout.RESTORE_RUN_PREFIX)
            if "outcome" not in i
        ]

    def checkpoint_at_ms(self, request: RestoreRequest) -> int:
        """When the restore of `request`'s topic into its target last recorded its checkpoint (0: never)."""
        item = (
            self._db.get_item(
                TableName=self._table,
                ConsistentRead=True,
                Key=layout.key(layout.restore_pk(request.target_topic), layout.restored_sk(request.topic)),
            ).get("Item")
            or {}
        )
        recorded = item.get("recorded_at_ms") or item.get("created_at_ms")  # older items: created_at_ms
        return int(recorded["N"]) if recorded else 0

    def advance(self, connector: str, run: RestoreRun, job_run_id: str, checkpoint_at_ms: int) -> bool:
        """Record attempt n + 1 if the stored attempt is still n; False if another tick did."""
        return self._conditional(
            connector,
            run,
            "SET attempt = :next, job_run_id = :id, checkpoint_at_ms = :at",
            {":next": {"N": str(run.attempt + 1)}, ":id": {"S": job_run_id}, ":at": {"N": str(checkpoint_at_ms)}},
        )

    def close(self, connector: str, run: RestoreRun, outcome: str) -> None:
        self._conditional(connector, run, "SET outcome = :outcome", {":outcome": {"S": outcome}})

    def _conditional(self, connector: str, run: RestoreRun, update: str, values: dict) -> bool:
        try:
            self._db.update_item(
                TableName=self._table,
                Key=layout.key(connector, layout.restore_run_sk(run.token)),
                UpdateExpression=update,
                ConditionExpression="attempt = :attempt",
                ExpressionAttributeValues={**values, ":attempt": {"N": str(run.attempt)}},
            )
            return True
        except ClientError as e:
            if e.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise


def settle(
    runs: RestoreRuns, connector: str, job_state: Callable[[str], str], restart: Callable[[RestoreRun], str]
) -> list[Settled]:
    """Settle the connector's open restores (see the module docstring): `job_state(job_run_id)` is EMR's state of a
    run, `restart(run)` starts the next attempt of `run` and answers its job run id."""
    settled = []
    for run in runs.open_runs(connector):
        state = job_state(run.job_run_id)
        if state == "SUCCESS":
            runs.close(connector, run, SUCCEEDED)
            settled.append(Settled(connector, run, SUCCEEDED))
        elif state not in ("FAILED", "CANCELLED"):
            settled.append(Settled(connector, run, "waiting"))
        elif (checkpoint := runs.checkpoint_at_ms(run.request)) > run.checkpoint_at_ms:
            try:
                job_run_id = restart(run)
            except ClientError:
                settled.append(Settled(connector, run, "start-failed"))
                continue
            runs.advance(connector, run, job_run_id, checkpoint)
            settled.append(Settled(connector, run, "resumed", job_run_id))
        else:
            runs.close(connector, run, STOPPED)
            settled.append(Settled(connector, run, STOPPED))
    return settled


def _dump(request: RestoreRequest) -> str:
    return json.dumps(asdict(request), sort_keys=True)


def _load(text: str) -> RestoreRequest:
    fields = json.loads(text)
    for name in ("partitions", "binary_headers"):
        if fields.get(name) is not None:
            fields[name] = tuple(fields[name])
    return RestoreRequest(**fields)
