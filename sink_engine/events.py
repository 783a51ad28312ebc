"""Structured log events with fixed names, one JSON object per line on the `sink_engine` logger."""

from __future__ import annotations

import json
import logging

logger = logging.getLogger("sink_engine")

FILE_CLOSED = "FILE_CLOSED"
FILES_UPLOADED = "FILES_UPLOADED"
MULTIPART_CLEANUP_FAILED = "MULTIPART_CLEANUP_FAILED"  # S3 refused a listing or abort: left to lifecycle
OFFSETS_COMMITTED = "OFFSETS_COMMITTED"
COMMIT_CONFLICT = "COMMIT_CONFLICT"
LEASE_ACQUIRED = "LEASE_ACQUIRED"
LEASE_RELEASED = "LEASE_RELEASED"
LEASE_RELEASE_FAILED = "LEASE_RELEASE_FAILED"  # the lease lapses by itself
RUN_PLANNED = "RUN_PLANNED"
RECORDS_EXPIRED = "RECORDS_EXPIRED"  # a committed offset below the partition's log start: those records were deleted
RUN_FINISHED = "RUN_FINISHED"  # its figures are the run's metrics (sink_engine/run/metrics.py)
STREAM_PROGRESS = "STREAM_PROGRESS"  # a continuous run's task: freshness, records written, lag (continuous/progress.py)
RUN_PROGRESS = "RUN_PROGRESS"  # a continuous run's driver: its tasks' totals, also said on stdout (run_progress.py)
METRICS_PUBLISH_FAILED = "METRICS_PUBLISH_FAILED"  # CloudWatch did not take a run's metrics; the run stands
RECORD_FAILED = "RECORD_FAILED"
SNAPSHOT_COMMITTED = "SNAPSHOT_COMMITTED"  # IcebergFormat: a run's data files appended to a table
SNAPSHOT_COMMIT_FAILED = "SNAPSHOT_COMMIT_FAILED"  # IcebergFormat: a table's snapshot commit failed; no offset commits
TABLES_COMMITTED = "TABLES_COMMITTED"  # IcebergFormat: every table's snapshot of a commit, and how long they took
OFFSETS_RECOVERED = "OFFSETS_RECOVERED"  # IcebergFormat: DynamoDB moved forward to a snapshot's offsets
FILES_STAGED = "FILES_STAGED"  # IcebergFormat, continuous: a task handed a partition's closed data files to the driver
STAGE_FILE_KEPT = "STAGE_FILE_KEPT"  # IcebergFormat, continuous: a spent staged file S3 did not delete (left behind)
SHARE_FAILED = "SHARE_FAILED"  # a continuous task's share of a connector ended on its error or lost lease (`cause`)
CONNECTOR_FAILED = "CONNECTOR_FAILED"  # a connector of a continuous run stopped alone (`cause`); the others go on
RUN_STOP_REQUESTED = "RUN_STOP_REQUESTED"  # SIGTERM/SIGINT, or the driver JVM's shutdown (`by`): the run stops
RUN_TIMED_OUT = "RUN_TIMED_OUT"  # sink.run.timeout.ms passed with a task still running: its Spark job is cancelled
TRANSACTION_RETRIED = "TRANSACTION_RETRIED"  # DynamoDB cancelled a transaction for a transient reason; sent again
CONFIG_KEY_IGNORED = "CONFIG_KEY_IGNORED"  # a connector key no one knows, ignored (config/key_policy.py)
DOCTOR_CHECK = "DOCTOR_CHECK"  # one check of `sink-engine doctor`: its name, status (ok, FAILED) and message


def emit(event: str, level: int = logging.INFO, **fields: object) -> None:
    """Log one event as `{"event": NAME, ...fields}`."""
    logger.log(level, json.dumps({"event": event, **fields}, default=str, sort_keys=True))
