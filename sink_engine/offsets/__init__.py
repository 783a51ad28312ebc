"""Offsets and the run lease, kept in one DynamoDB table: its items are those of `layout` (the driver's recorded
plans and the DLQ replay's progress are items of it too)."""

from sink_engine.offsets.lease import LeaseKeeper, Leases, LeaseToken
from sink_engine.offsets.store import OffsetStore
from sink_engine.offsets.table import ensure_table, table_exists

__all__ = ["LeaseKeeper", "LeaseToken", "Leases", "OffsetStore", "ensure_table", "table_exists"]
