"""Errors of the IcebergFormat path; each names the table (and record) at fault."""

from __future__ import annotations

from sink_engine.errors import RecordError, SinkError


class TableSchemaError(RecordError):
    """A record the table's schema cannot take (a type change that is no widening, a column it lacks with schema
    evolution off does not count: such fields are dropped). Dead-lettered with errors.tolerance=all."""


class TableError(SinkError):
    """A table the run needs is missing, or the catalog refused an operation for good."""


class TableCommitConflictError(SinkError):
    """Another run of the connector committed to the table, or this run's lease is gone: nothing more is committed."""

    exit_code = 4

    def __init__(self, connector: str, table: str, reason: str):
        self.connector, self.table = connector, table
        super().__init__(
            f"snapshot commit to table {table} for connector '{connector}' refused: {reason}; another run owns the work"
        )
