"""ISO-8601 text values (JSON Schema `format: date-time` and `format: date`) that keep their text.

An `IsoText` is the string as the record holds it, so JSON output, field partitioning and the RecordField
timestamp extractor see the text, as with Confluent's JsonSchemaConverter (a string there); `value` is the
parsed instant (a UTC `datetime`) or day (a `date`), which columnar formats write as a timestamp or date.
"""

from __future__ import annotations

import datetime


class IsoText(str):
    """A string with its parsed value (`value`)."""

    value: datetime.date


def _rebuild(text: str, value: datetime.date) -> IsoText:
    made = IsoText(text)
    made.value = value
    return made


def parse_date_time(text: str) -> IsoText:
    """An RFC 3339 / ISO-8601 date-time; without an offset it is UTC. ValueError when it is not one."""
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r:.60} is not an ISO-8601 date-time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return _rebuild(text, parsed.astimezone(datetime.UTC))


def parse_date(text: str) -> IsoText:
    """An ISO-8601 full date (`2024-01-15`). ValueError when it is not one."""
    try:
        parsed = datetime.date.fromisoformat(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r:.60} is not an ISO-8601 date") from None
    return _rebuild(text, parsed)
