"""Dead-letter counts by error class, added up and printed."""

from __future__ import annotations

from collections.abc import Iterable


def add_counts(counts: Iterable[dict]) -> dict:
    total: dict = {}
    for count in counts:
        for error_class, n in count.items():
            total[error_class] = total.get(error_class, 0) + n
    return dict(sorted(total.items()))


def format_counts(counts: dict) -> str:
    """`ConversionError=3, NullValueError=1`, or `none`."""
    return ", ".join(f"{error_class}={n}" for error_class, n in sorted(counts.items())) or "none"
