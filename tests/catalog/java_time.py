"""Athena's `date` partition projection, emulated with Java's own java.time (the JVM that pyspark starts).

Athena formats projected dates with java.time's DateTimeFormatter, in UTC, from the range start (parsed with the
same pattern) by `interval` `interval.unit` up to the range end (a date in the pattern or `NOW[+-]N UNIT`). This
does the same with the real classes, so a pattern Java reads differently from the engine's Joda formatter, or a
range start Java cannot parse, fails here as it would in Athena.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_RELATIVE = re.compile(r"\s*NOW\s*(?:([+-])\s*([0-9]+)\s*(YEARS?|MONTHS?|WEEKS?|DAYS?|HOURS?|MINUTES?|SECONDS?)\s*)?")


class JavaTime:
    """java.time through a py4j gateway; `close()` stops the JVM."""

    def __init__(self):
        from pyspark.java_gateway import launch_gateway

        self._gateway = launch_gateway()
        jvm = self._gateway.jvm
        self._time, self._locale = jvm.java.time, jvm.java.util.Locale.US
        self._fields = jvm.java.time.temporal.ChronoField

    def close(self) -> None:
        self._gateway.shutdown()

    def formatter(self, pattern: str):
        """DateTimeFormatter.ofPattern(pattern, Locale.US); raises py4j's error for a pattern Java refuses."""
        return self._time.format.DateTimeFormatter.ofPattern(pattern, self._locale)

    def format(self, pattern: str, moment: datetime) -> str:
        """`moment`'s wall-clock fields (its zone ignored) formatted by the Java pattern."""
        local = self._time.LocalDateTime.of(
            moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second, moment.microsecond * 1000
        )
        return self.formatter(pattern).format(local)

    def projected(self, projection: dict[str, str], now: datetime) -> list[str]:
        """Every value of a `date` projection (`type`, `format`, `range`, `interval`, `interval.unit`), the
        relative range ends taken at `now` (UTC)."""
        assert projection["type"] == "date", projection
        pattern = projection["format"]
        formatter = self.formatter(pattern)
        start_text, end_text = projection["range"].split(",")
        start, end = self._bound(formatter, start_text, now), self._bound(formatter, end_text, now)
        unit = self._unit(projection["interval.unit"])
        step = int(projection["interval"])
        values, current = [], start
        while not current.isAfter(end):
            values.append(formatter.format(current))
            current = current.plus(step, unit)
        return values

    def _bound(self, formatter, text: str, now: datetime):
        relative = _RELATIVE.fullmatch(text)
        if relative is None:
            return self._local(formatter.parse(text))
        utc = now.astimezone(UTC)
        moment = self._time.LocalDateTime.of(utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second)
        if relative[1]:
            unit = relative[3].upper() + ("" if relative[3].upper().endswith("S") else "S")
            amount = int(relative[2]) * (1 if relative[1] == "+" else -1)
            moment = moment.plus(amount, self._unit(unit))
        return moment

    def _unit(self, word: str):
        """The ChronoUnit of one of Athena's unit words (YEARS ... SECONDS are ChronoUnit's names; MILLISECONDS
        is its MILLIS)."""
        word = word.strip().upper()
        return self._time.temporal.ChronoUnit.valueOf("MILLIS" if word == "MILLISECONDS" else word)

    def _local(self, parsed):
        """The LocalDateTime a parsed text names: fields it does not give are the start of their unit."""
        f = self._fields

        def get(field, default: int) -> int:
            return parsed.getLong(field) if parsed.isSupported(field) else default

        return self._time.LocalDateTime.of(
            get(f.YEAR, 1970),
            get(f.MONTH_OF_YEAR, 1),
            get(f.DAY_OF_MONTH, 1),
            get(f.HOUR_OF_DAY, 0),
            get(f.MINUTE_OF_HOUR, 0),
            get(f.SECOND_OF_MINUTE, 0),
            get(f.NANO_OF_SECOND, 0),
        )
