"""Single message transforms (SMTs) between value conversion and partitioning (see base.py for the contract)."""
