"""Time buckets of `partition.duration.ms` in a zone, computed as the Confluent TimeBasedPartitioner does.

A timestamp's bucket: take its local time in the zone (UTC ms plus the zone's offset at that instant),
floor it to a multiple of the duration, and turn that local time back into an instant with Joda's
`convertLocalToUTC(local, strict=false)`: in a DST overlap the offset found at the local time read as
UTC wins (the summer time west of Greenwich, the standard time east of it); in a DST gap the offset
before the gap, so a bucket that starts in the gap is named after the first valid local time. The path
is the bucket instant formatted in the zone. One difference: local times before 1970 are floored, where
Java's integer division rounds them towards zero.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sink_engine.errors import ConfigError
from sink_engine.partition.java_zone_ids import SHORT_IDS

_OFFSET = re.compile(r"([+-])(\d{1,2})(?::?(\d{2}))?")
_SAMPLE_MS = 6 * 3600 * 1000  # no zone changes its offset twice within six hours
DAY_MS = 24 * 3_600_000


def parse_zone(text: str) -> tzinfo:
    """`UTC`, an IANA id (`Europe/Paris`), a Java short id (`PST`, as Java's `ZoneId.SHORT_IDS` maps it) or a
    fixed offset `[+-]hh:mm`; ConfigError naming `timezone`."""
    text = SHORT_IDS.get(text.strip(), text.strip())
    match = _OFFSET.fullmatch(text)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise ConfigError("timezone", f"{text!r} is not a valid offset")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if sign == "-" else delta)
    if text.upper() in ("UTC", "Z", "GMT"):
        return UTC
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise ConfigError("timezone", f"{text!r} is not a known time zone id or [+-]hh:mm offset: {e}") from None


class TimeBuckets:
    """Encoded path of the bucket of each timestamp; remembers the last bucket's range of instants so that
    consecutive timestamps in one bucket cost a comparison, not a datetime."""

    def __init__(self, duration_ms: int, zone: tzinfo, formatter: Callable[[datetime], str]):
        self.duration_ms, self.zone, self._format = duration_ms, zone, formatter
        self._low, self._high, self._path = 0, 0, ""

    def path(self, timestamp_ms: int) -> str:
        if self._low <= timestamp_ms < self._high:
            return self._path
        floor = self._local_floor(timestamp_ms)
        low, high = self.local_to_utc(floor), self.local_to_utc(floor + self.duration_ms)
        path = self._format(datetime.fromtimestamp(low / 1000, self.zone))
        if self._is_translation(low, high, floor):
            self._low, self._high, self._path = low, high, path
        return path

    def bucket_start(self, timestamp_ms: int) -> int:
        """The instant (UTC ms) that starts the bucket holding `timestamp_ms`."""
        return self.local_to_utc(self._local_floor(timestamp_ms))

    def offset_ms(self, instant_ms: int) -> int:
        """The zone's offset from UTC at an instant."""
        offset = datetime.fromtimestamp(instant_ms / 1000, self.zone).utcoffset()
        assert offset is not None  # an aware time
        return int(offset.total_seconds() * 1000)

    def local_to_utc(self, local_ms: int) -> int:
        """Joda's `convertLocalToUTC(local, false)`."""
        offset_local = self.offset_ms(local_ms)
        offset = self.offset_ms(local_ms - offset_local)
        if offset_local != offset and offset_local < 0 and self.offset_ms(local_ms - offset) != offset:
            offset = offset_local  # in a DST gap west of Greenwich: keep the offset before the gap
        return local_ms - offset

    def _local_floor(self, timestamp_ms: int) -> int:
        local = timestamp_ms + self.offset_ms(timestamp_ms)
        return local - local % self.duration_ms

    def _is_translation(self, low: int, high: int, floor: int) -> bool:
        """True when [low, high) holds exactly the instants whose local time lies in [floor, floor + duration):
        the zone keeps one offset over it (checked every six hours and at both ends)."""
        offset = self.offset_ms(low)
        if low + offset != floor or high + offset > floor + self.duration_ms:
            return False
        samples = list(range(low + _SAMPLE_MS, high, _SAMPLE_MS)) + [high - 1]
        return all(self.offset_ms(t) == offset for t in samples)


def next_rotation_ms(now_ms: int, interval_ms: int, zone: tzinfo) -> int:
    """The next `rotate.schedule.interval.ms` boundary after `now_ms`: a multiple of the interval past local
    midnight, at most the next midnight (the connector's DateTimeUtils.getNextTimeAdjustedByDay). The driver
    (run/wall_clock.py) and the trigger Lambda (which ships this module) decide with it."""
    start_of_day = TimeBuckets(DAY_MS, zone, str).bucket_start(now_ms)
    next_offset = ((now_ms - start_of_day) // interval_ms + 1) * interval_ms
    return start_of_day + min(next_offset, DAY_MS)
