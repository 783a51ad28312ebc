"""The wall clock the leases and offsets are kept by."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Epoch milliseconds."""
    return int(time.time() * 1000)
