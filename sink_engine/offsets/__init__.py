"""Offsets and the run lease, kept in one DynamoDB table (string keys `pk`, `sk`).

Items, all under `pk = <connector name>`:
- `sk = "LEASE"`: owner, epoch (fencing token, only ever grows), expires_at_ms.
- `sk = "OFFSET#<topic>#<partition>"`: topic, partition, next_offset, epoch, committed_at_ms, last_file.
"""
from sink_engine.offsets.lease import LeaseKeeper, LeaseToken, Leases
from sink_engine.offsets.store import OffsetStore
from sink_engine.offsets.table import ensure_table, table_exists

__all__ = ["LeaseKeeper", "LeaseToken", "Leases", "OffsetStore", "ensure_table", "table_exists"]

