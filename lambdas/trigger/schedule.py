"""Scheduled-rotation boundaries, as the engine computes them (sink_engine/driver/wall_clock.py), without the engine.

The trigger's code folder holds only `lambdas/`: importing `sink_engine.driver.wall_clock` pulls in the config
registry, hence confluent-kafka's Schema Registry client and boto3 (0.47 s, and libraries the trigger's layer
lacks). These few lines are the same rule; tests/lambdas/test_trigger_schedule.py checks that they agree with the
engine's over many instants and zones (DST days included).
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from lambdas.trigger.errors import TriggerConfigError

DAY_MS = 24 * 3_600_000
_OFFSET = re.compile(r"([+-])(\d{1,2})(?::?(\d{2}))?")


def parse_zone(text: str, connector: str) -> tzinfo:
    """`UTC`, an IANA id or a fixed `[+-]hh:mm` offset, as the engine reads `timezone`."""
    text = text.strip()
    match = _OFFSET.fullmatch(text)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise TriggerConfigError(connector, "timezone", f"{text!r} is not a valid offset")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if sign == "-" else delta)
    if text.upper() in ("UTC", "Z", "GMT"):
        return timezone.utc
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise TriggerConfigError(connector, "timezone", f"{text!r} is not a known zone here: {e}") from None


def next_rotation_ms(now_ms: int, interval_ms: int, zone: tzinfo) -> int:
    """The first boundary after `now_ms`: a multiple of the interval past local midnight, at most the next
    midnight (the connector's DateTimeUtils.getNextTimeAdjustedByDay)."""
    start_of_day = _start_of_day(now_ms, zone)
    next_offset = ((now_ms - start_of_day) // interval_ms + 1) * interval_ms
    return start_of_day + min(next_offset, DAY_MS)


def _offset_ms(instant_ms: int, zone: tzinfo) -> int:
    return int(datetime.fromtimestamp(instant_ms / 1000, zone).utcoffset().total_seconds() * 1000)


def _start_of_day(instant_ms: int, zone: tzinfo) -> int:
    """Local midnight before `instant_ms`, turned into an instant with Joda's convertLocalToUTC(local, false)."""
    local = instant_ms + _offset_ms(instant_ms, zone)
    floor = local - local % DAY_MS
    offset_local = _offset_ms(floor, zone)
    offset = _offset_ms(floor - offset_local, zone)
    if offset_local != offset and offset_local < 0 and _offset_ms(floor - offset, zone) != offset:
        offset = offset_local  # midnight in a DST gap west of Greenwich: keep the offset before the gap
    return floor - offset
