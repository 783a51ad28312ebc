"""Joda-Time patterns (`path.format`), compiled once into a formatter of zone-aware datetimes.

The pattern language of Joda's DateTimeFormat, as the Confluent connector uses it: `'quoted literal'`
(`''` is one quote), any other non-letter is literal, and runs of a letter are fields:

    G era text      C century      Y year of era    y year        x week year   w week of week year
    e day of week   E day name     D day of year    M month (MMM/MMMM: names)   d day of month
    a AM/PM         K hour 0-11    h hour 1-12      H hour 0-23   k hour 1-24   m minute   s second
    S fraction of second           z zone name      Z zone offset (Z: +0100, ZZ: +01:00, ZZZ: zone id)

Numbers are zero-padded to the run length (`yy`, `YY` and `xx` give the two-digit year); texts are short
below four letters and full from four. Names come from CLDR (babel) for the `locale`, read as the connector
reads it (parse_locale).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from babel import Locale, localedata
from babel.dates import get_timezone_name

from sink_engine.errors import ConfigError

Field = Callable[[datetime], str]


# Java's Locale(language) maps these old ISO 639 codes to the current ones (Java 17).
_OLD_LANGUAGES = {"iw": "he", "in": "id", "ji": "yi"}


class JavaRootLocale(Locale):
    """The names Java 9+ (CLDR locale data) formats with for a language it has no data for: the root locale's,
    which the JDK ships as English abbreviations at every width (Jan, Mon), AM/PM, eras CE/BCE, English zone
    names. Measured with Joda-Time 2.12 on OpenJDK 17 (`new Locale("en_us")`, `new Locale("fr_fr")`)."""

    def __init__(self) -> None:
        super().__init__("en")

    @property
    def months(self) -> dict:  # type: ignore[override]  # Babel's formatting only reads it, as a plain dict
        return _abbreviated_everywhere(super().months)

    @property
    def days(self) -> dict:  # type: ignore[override]  # Babel's formatting only reads it, as a plain dict
        return _abbreviated_everywhere(super().days)

    @property
    def eras(self) -> dict:  # type: ignore[override]  # Babel's formatting only reads it, as a plain dict
        return {width: {0: "BCE", 1: "CE"} for width in ("abbreviated", "wide", "narrow")}

    def __repr__(self) -> str:
        return "<JavaRootLocale>"


def _abbreviated_everywhere(names: Mapping[str, Mapping[str, Any]]) -> dict:
    return {context: {width: names[context]["abbreviated"] for width in names[context]} for context in names}


def parse_locale(text: str) -> Locale:
    """The locale of month and day names as the connector builds it, `new Locale(text)`, which never fails: the
    whole value is a language, lower-cased (`EN` is `en`, but `en_US`, `en-US` and `fr_FR` are the languages
    `en_us`, `en-us`, `fr_fr`). A language CLDR has data for gives its names (`de`: März); any other value
    (`US`, `en_US`, `fr-FR`, `xx`) gives JavaRootLocale's, as the connector writes them on Java 9+."""
    language = text.lower()
    language = _OLD_LANGUAGES.get(language, language)
    if re.fullmatch(r"[a-z]{2,8}", language) and language != "root" and localedata.exists(language):
        return Locale.parse(language)
    return JavaRootLocale()


def compile_pattern(pattern: str, locale: Locale) -> Callable[[datetime], str]:
    """A function formatting a zone-aware datetime by the pattern; ConfigError naming `path.format`."""
    parts: list = []
    for kind, value in _tokens(pattern):
        parts.append(value if kind == "literal" else _field(value[0], len(value), locale))
    literal_only = all(isinstance(p, str) for p in parts)
    if literal_only:
        text = "".join(parts)
        return lambda moment: text
    return lambda moment: "".join(p if isinstance(p, str) else p(moment) for p in parts)


def _tokens(pattern: str) -> Iterator[tuple[str, str]]:
    """(kind, text) pairs: ("literal", text) or ("field", run of one letter)."""
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "'":
            try:
                text, i = quoted_literal(pattern, i)
            except ValueError:
                raise ConfigError("path.format", f"{pattern!r} has an unterminated quoted literal") from None
            yield "literal", text
        elif char.isascii() and char.isalpha():
            j = i
            while j < n and pattern[j] == char:
                j += 1
            yield "field", pattern[i:j]
            i = j
        else:
            yield "literal", char
            i += 1


def quoted_literal(pattern: str, start: int) -> tuple[str, int]:
    """The literal starting at the quote at `start` and the index after its closing quote, as Joda-Time and
    java.text.SimpleDateFormat read quotes ('' is a quote); ValueError when the quote is not closed."""
    if pattern.startswith("''", start):
        return "'", start + 2
    text, i = [], start + 1
    while i < len(pattern):
        if pattern[i] == "'":
            if pattern.startswith("''", i):
                text.append("'")
                i += 2
                continue
            return "".join(text), i + 1
        text.append(pattern[i])
        i += 1
    raise ValueError("unterminated quote")


def _number(get: Callable[[datetime], int], width: int) -> Field:
    return lambda moment: f"{get(moment):0{width}d}"


def _year(get: Callable[[datetime], int], count: int) -> Field:
    if count == 2:
        return lambda moment: f"{get(moment) % 100:02d}"
    return _number(get, count)


def _text(names: Callable[[Locale, str], dict], key: Callable[[datetime], object], count: int, locale: Locale) -> Field:
    table = names(locale, "wide" if count >= 4 else "abbreviated")
    return lambda moment: table[key(moment)]


def _field(letter: str, count: int, locale: Locale) -> Field:
    simple = {
        "C": lambda: _number(lambda m: m.year // 100, count),
        "Y": lambda: _year(lambda m: m.year, count),
        "y": lambda: _year(lambda m: m.year, count),
        "x": lambda: _year(lambda m: m.isocalendar()[0], count),
        "w": lambda: _number(lambda m: m.isocalendar()[1], count),
        "e": lambda: _number(lambda m: m.isoweekday(), count),
        "D": lambda: _number(lambda m: m.timetuple().tm_yday, count),
        "d": lambda: _number(lambda m: m.day, count),
        "K": lambda: _number(lambda m: m.hour % 12, count),
        "h": lambda: _number(lambda m: m.hour % 12 or 12, count),
        "H": lambda: _number(lambda m: m.hour, count),
        "k": lambda: _number(lambda m: m.hour or 24, count),
        "m": lambda: _number(lambda m: m.minute, count),
        "s": lambda: _number(lambda m: m.second, count),
        "S": lambda: _fraction(count),
        "M": lambda: _month(count, locale),
        "E": lambda: _text(lambda loc, w: loc.days["format"][w], lambda m: m.weekday(), count, locale),
        "a": lambda: _text(
            lambda loc, w: loc.day_periods["format"]["abbreviated"], lambda m: "am" if m.hour < 12 else "pm", 1, locale
        ),
        "G": lambda: _text(lambda loc, w: loc.eras["abbreviated"], lambda m: 1, 1, locale),
        "z": lambda: _zone_name(count, locale),
        "Z": lambda: _zone_offset(count),
    }
    if letter not in simple:
        raise ConfigError("path.format", f"illegal pattern component: {letter * count}")
    return simple[letter]()


def _fraction(count: int) -> Field:
    def fraction(moment: datetime) -> str:
        digits = f"{moment.microsecond // 1000:03d}"
        return (digits + "0" * count)[:count]

    return fraction


def _month(count: int, locale: Locale) -> Field:
    if count < 3:
        return _number(lambda m: m.month, count)
    return _text(lambda loc, w: loc.months["format"][w], lambda m: m.month, count, locale)


def _zone_name(count: int, locale: Locale) -> Field:
    if count >= 4:
        return lambda moment: get_timezone_name(moment, width="long", locale=locale)
    return lambda moment: moment.tzname() or ""


def _zone_offset(count: int) -> Field:
    if count >= 3:
        return lambda moment: getattr(moment.tzinfo, "key", None) or _offset_text(moment, ":")
    separator = ":" if count == 2 else ""
    return lambda moment: _offset_text(moment, separator)


def _offset_text(moment: datetime, separator: str) -> str:
    offset = moment.utcoffset()
    assert offset is not None  # formatted times are aware
    seconds = int(offset.total_seconds())
    sign = "-" if seconds < 0 else "+"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return f"{sign}{hours:02d}{separator}{minutes:02d}"
