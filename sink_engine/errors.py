"""Domain errors of the sink engine. Each carries the data that names what is at fault."""

from __future__ import annotations

import datetime
from collections.abc import Iterable


class SinkError(Exception):
    """Base of every error the engine raises on purpose; the CLI prints its message and exits non-zero."""

    exit_code = 1


class ConfigError(SinkError):
    """A connector config key is missing, malformed or names something not built yet."""

    exit_code = 2

    def __init__(self, key: str, message: str):
        self.key, self.reason = key, message
        super().__init__(f"config key '{key}': {message}")


class ConfigErrors(ConfigError):
    """Several config errors found in one pass (config/collector.py), in order; `key` and `reason` are the first's,
    the message lists them all, one a line."""

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        self.errors = tuple(errors)
        self.key, self.reason = self.errors[0].key, self.errors[0].reason
        SinkError.__init__(self, f"{len(self.errors)} config errors:\n" + "\n".join(f"  {e}" for e in self.errors))


class OptionError(ConfigError):
    """A command-line option that is malformed or contradicts the config (exit code 2, as a config error)."""

    def __init__(self, option: str, message: str):
        SinkError.__init__(self, f"option {option}: {message}")
        self.key, self.reason = option, message


class RecordError(SinkError):
    """A Kafka record that cannot be converted, partitioned or written."""

    def __init__(self, topic: str, partition: int, offset: int, cause: str):
        self.topic, self.partition, self.offset, self.cause = topic, partition, offset, cause
        super().__init__(f"record {topic}-{partition}@{offset}: {cause}")


class ConversionError(RecordError):
    """A value the converter cannot read (malformed JSON, not UTF-8, bad Avro, unknown schema id, ...)."""


class PartitioningError(RecordError):
    """A record whose encoded partition cannot be computed (missing field, unreadable timestamp, ...)."""


class SchemaProjectionError(RecordError):
    """A record the writer cannot add under the current schema (projection under schema.compatibility)."""


class FormatError(RecordError):
    """A value the output format cannot hold (e.g. JSON that is not an object, for Parquet or Avro)."""


class TransformationError(RecordError):
    """A record a single message transform cannot transform; the cause names the transform's alias.
    `executing_class` is the transform's class, for the dead letter."""

    executing_class = ""


class NullValueError(RecordError):
    """A record with a null value (tombstone) under behavior.on.null.values=fail."""


class RunTimeoutError(SinkError):
    """The run passed `sink.run.timeout.ms`: its ranges stopped (what their closed files hold is committed) or, when
    a task did not stop, its Spark job was cancelled (nothing committed). The lease is released either way."""


class RunStoppedError(SinkError):
    """A bounded run was asked to stop (SIGTERM, SIGINT or its driver JVM's shutdown) while its tasks ran: its ranges
    stopped (what their closed files hold is committed) or, when a task did not stop within half the lease, its Spark
    job was cancelled (nothing committed). The lease is released either way."""


class SourceError(SinkError):
    """Kafka could not be reached or did not deliver the planned records."""


class StorageError(SinkError):
    """S3 refused or failed an operation after retries."""


class LeaseHeldError(SinkError):
    """Another run holds the connector's lease; this run must not start."""

    exit_code = 3

    def __init__(
        self,
        connector: str,
        owner: str,
        expires_at_ms: int,
        now_ms: int | None = None,
        silent_ms: int | None = None,
        renewals_stopped: bool = False,
    ):
        """`silent_ms`: since the holder last renewed (or took) the lease; `renewals_stopped`: for longer than its
        renewals take (it has most likely crashed). Times are shown in local time and seconds from `now_ms`."""
        self.connector, self.owner, self.expires_at_ms = connector, owner, expires_at_ms
        self.now_ms, self.silent_ms, self.renewals_stopped = now_ms, silent_ms, renewals_stopped
        advice = (
            "nothing was done (--wait-for-lease waits for it to lapse and goes on)"
            if renewals_stopped
            else "another run is in progress; nothing was done"
        )
        super().__init__(f"connector '{connector}' is leased by {self.situation()}; {advice}")

    def situation(self) -> str:
        """Who holds the lease, until when (local time, and seconds from now when known), and whether it still
        renews it."""
        at = datetime.datetime.fromtimestamp(self.expires_at_ms / 1000).astimezone()
        until = at.strftime("%Y-%m-%d %H:%M:%S %Z")
        if self.now_ms is not None:
            until += f", in {max(0, self.expires_at_ms - self.now_ms) / 1000:.0f} s"
        if self.silent_ms is None:
            return f"run {self.owner} until {until}"
        silent = f"{self.silent_ms / 1000:.0f} s ago"
        if self.renewals_stopped:
            return (
                f"run {self.owner} until {until}: its renewals stopped {silent}, so it has most likely crashed and "
                "the lease lapses by itself then"
            )
        return f"run {self.owner} until {until}: it renewed the lease {silent}, so it is running"


class CommitConflictError(SinkError):
    """An offset commit's condition failed: another run owns the work now. Nothing more is committed."""

    exit_code = 4

    def __init__(self, connector: str, topic: str, partition: int, expected_start: int | None):
        self.connector, self.topic, self.partition = connector, topic, partition
        self.expected_start = expected_start
        super().__init__(
            f"commit of {topic}-{partition} for connector '{connector}' lost its condition "
            f"(lease epoch changed or next offset is no longer {expected_start}); another run owns the work"
        )


class LeaseLostError(SinkError):
    """A long-lived run found its lease taken by another run (it lapsed, unrenewed): nothing more was committed."""

    exit_code = 4

    def __init__(self, connector: str):
        self.connector = connector
        super().__init__(
            f"connector '{connector}': the run's lease is no longer its own (another run took it after it lapsed); "
            "nothing more was committed"
        )


class CommitFailedError(SinkError):
    """An offset commit that DynamoDB did not answer for good (its retries failed). `committed` is what reading the
    offsets item back says: False (not committed), None (unknown: the read failed too). A commit found done is
    no error."""

    def __init__(
        self, connector: str, topic: str, partition: int, next_offset: int, committed: bool | None, cause: str
    ):
        self.connector, self.topic, self.partition, self.next_offset = connector, topic, partition, next_offset
        self.committed = committed
        outcome = (
            "read back, it was not committed: the next run writes the same files again and commits them"
            if committed is False
            else "it could not be read back, so whether it was committed is unknown: the next run goes on from "
            "what the offsets table holds, rewriting identical files if it was not"
        )
        super().__init__(
            f"commit of {topic}-{partition} (next offset {next_offset}) for connector '{connector}' "
            f"failed: {cause}; {outcome}"
        )


class AwsCallError(SinkError):
    """An AWS call failed outside the engine's own handling (access denied, throttled past the SDK's retries, a
    missing resource); names the operation and AWS's error code and message (which names the IAM action)."""

    def __init__(self, operation: str, code: str, message: str):
        self.operation, self.code = operation, code
        hint = " (the IAM role or user running the job lacks this permission)" if "AccessDenied" in code else ""
        super().__init__(f"AWS call {operation} failed: {code}: {message}{hint}")
