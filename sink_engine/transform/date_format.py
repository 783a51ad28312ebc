"""java.text.SimpleDateFormat patterns in UTC, as TimestampConverter uses them: epoch milliseconds to text and
back (English names, the default Locale of a Connect worker in most deployments).

Pattern letters: G y M L d D E u a H k K h m s S z Z X, quoted literals ('T', '' for a quote); any other ASCII
letter is an error, as in Java. Formatting is Java's: numbers zero-padded to the letter count, `yy` the last two
digits, `MMM`/`MMMM` short/long month names, `S` the milliseconds (not a fraction), `z` UTC, `Z` +0000, `X` Z;
the week fields `Y` (week year, often written by mistake for `y`), `w`, `W` and `F` as in Java's default US
week (weeks start on Sunday, week 1 holds January 1st). Parsing them is not built (an error for the record).

Parsing is lenient like SimpleDateFormat's default: numbers may overflow into the next unit (month 13 is
January of the next year), text after the pattern is ignored, a numeric field directly followed by another
takes exactly its letter count of digits. Zones read are `Z`, `UTC`/`GMT`/`UT` with an optional offset, and
`+hh`, `+hhmm`, `+hh:mm`. A two-digit `yy` year is read into 1946-2045 (Java's window, 80 years back from
now, fixed here at 2026 so that reruns agree).
"""

from __future__ import annotations

import datetime
import re

from sink_engine.partition.joda_format import quoted_literal

_VALID = "GyYMLwWDdFEuaHkKhmsSzZX"
_WEEK_LETTERS = "YwWF"
_NUMERIC = set("yYMLwWdDFuHkKhmsS")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_EPOCH_ORDINAL = _EPOCH.toordinal()
_DAY_MS = 86_400_000
_TWO_DIGIT_YEAR_START = 1946
_ZONE = re.compile(r"(?i)(?:Z(?![a-z])|(?:UTC|GMT|UT)?([+-])(\d{2}):?(\d{2})?|(UTC|GMT|UT))")


class DateFormat:
    """One compiled pattern. ValueError from the constructor when the pattern is not one Java accepts (or uses
    a letter not built here), from `parse` when the text does not match, from `format` out of years 1-9999."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.tokens = _tokenize(pattern)

    def format(self, millis: int) -> str:
        try:
            moment = _EPOCH + datetime.timedelta(milliseconds=millis)
        except OverflowError:
            raise ValueError(f"{millis} ms is outside years 1-9999") from None
        return "".join(token if isinstance(token, str) else _format_field(token, moment) for token in self.tokens)

    def parse(self, text: str) -> int:
        """Epoch milliseconds of `text`."""
        fields: dict[str, int] = {}
        pos = 0
        for index, token in enumerate(self.tokens):
            if isinstance(token, str):
                if not text.startswith(token, pos):
                    raise ValueError(f"expected {token!r} at position {pos}")
                pos += len(token)
                continue
            following = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
            abutting = isinstance(following, tuple) and _is_numeric(following)
            pos = _parse_field(token, text, pos, abutting, fields)
        return _to_millis(fields)


def _tokenize(pattern: str) -> list:
    """Literal strings and (letter, count) fields."""
    tokens: list = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            literal, i = quoted_literal(pattern, i)
            tokens.append(literal)
        elif char.isascii() and char.isalpha():
            if char not in _VALID:
                raise ValueError(f"illegal pattern character {char!r}")
            end = i
            while end < len(pattern) and pattern[end] == char:
                end += 1
            tokens.append((char, end - i))
            i = end
        else:
            tokens.append(char)
            i += 1
    return _merge_literals(tokens)


def _merge_literals(tokens: list) -> list:
    merged: list = []
    for token in tokens:
        if isinstance(token, str) and merged and isinstance(merged[-1], str):
            merged[-1] += token
        elif token != "":
            merged.append(token)
    return merged


def _is_numeric(token: tuple[str, int]) -> bool:
    letter, count = token
    return letter in _NUMERIC and not (letter in "ML" and count >= 3)


def _format_field(token: tuple[str, int], moment: datetime.datetime) -> str:
    letter, count = token
    if letter in "yY":
        year = moment.year if letter == "y" else _week_year(moment.date())
        return f"{year % 100:02d}" if count == 2 else str(year).zfill(count)
    if letter in "ML" and count >= 3:
        name = _MONTHS[moment.month - 1]
        return name if count >= 4 else name[:3]
    if letter == "E":
        name = _DAYS[moment.weekday()]
        return name if count >= 4 else name[:3]
    text = {
        "G": "AD",
        "a": "AM" if moment.hour < 12 else "PM",
        "z": "Coordinated Universal Time" if count >= 4 else "UTC",
        "Z": "+0000",
        "X": "Z",
    }.get(letter)
    if text is not None:
        return text
    number = {
        "M": moment.month,
        "L": moment.month,
        "d": moment.day,
        "D": moment.timetuple().tm_yday,
        "u": moment.isoweekday(),
        "H": moment.hour,
        "k": moment.hour or 24,
        "K": moment.hour % 12,
        "h": moment.hour % 12 or 12,
        "m": moment.minute,
        "s": moment.second,
        "S": moment.microsecond // 1000,
        "F": (moment.day - 1) // 7 + 1,
        "w": _week_of_year(moment.date()),
        "W": _week_of_month(moment.date()),
    }[letter]
    return str(number).zfill(count)


def _week_start(day: datetime.date) -> datetime.date:
    """The Sunday on or before `day`."""
    return day - datetime.timedelta(days=(day.weekday() + 1) % 7)


def _week_year(day: datetime.date) -> int:
    return day.year + 1 if day >= _week_start(datetime.date(day.year + 1, 1, 1)) else day.year


def _week_of_year(day: datetime.date) -> int:
    return (day - _week_start(datetime.date(_week_year(day), 1, 1))).days // 7 + 1


def _week_of_month(day: datetime.date) -> int:
    return (day.day - 1 + (day.replace(day=1).weekday() + 1) % 7) // 7 + 1


def _parse_field(token: tuple[str, int], text: str, pos: int, abutting: bool, fields: dict) -> int:
    letter, count = token
    if letter in _WEEK_LETTERS:
        raise ValueError(f"parsing the week field {letter!r} is not supported by this engine")
    if _is_numeric(token):
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        end = pos + count if abutting else len(text)
        digits = re.match(r"\d+", text[pos:end])
        if digits is None or (abutting and len(digits.group()) < count):
            raise ValueError(f"expected digits for {letter * count} at position {pos}")
        value = int(digits.group())
        if letter == "y" and count <= 2 and len(digits.group()) == 2:
            value = _two_digit_year(value)
        fields["M" if letter == "L" else letter] = value
        return pos + len(digits.group())
    if letter in "ML":
        return _parse_name(text, pos, _MONTHS, "M", fields)
    if letter == "E":
        return _parse_name(text, pos, _DAYS, "E", fields)
    if letter == "a":
        return _parse_name(text, pos, ("AM", "PM"), "a", fields)
    if letter == "G":
        end = _parse_name(text, pos, ("AD", "BC"), "G", fields)
        if fields["G"] != 1:
            raise ValueError("BC dates are not supported")
        return end
    return _parse_zone(text, pos, fields)


def _two_digit_year(value: int) -> int:
    century = _TWO_DIGIT_YEAR_START - _TWO_DIGIT_YEAR_START % 100
    year = century + value
    return year if year >= _TWO_DIGIT_YEAR_START else year + 100


def _parse_name(text: str, pos: int, names: tuple[str, ...], key: str, fields: dict) -> int:
    """The longest full or three-letter name at `pos`, case-insensitively; its 1-based index into `fields`."""
    candidates = [(name, i) for i, full in enumerate(names) for name in {full, full[:3]}]
    for name, index in sorted(candidates, key=lambda item: -len(item[0])):
        if text[pos : pos + len(name)].lower() == name.lower():
            fields[key] = index + 1
            return pos + len(name)
    raise ValueError(f"expected one of {', '.join(names)} at position {pos}")


def _parse_zone(text: str, pos: int, fields: dict) -> int:
    match = _ZONE.match(text, pos)
    if match is None:
        raise ValueError(f"expected a time zone at position {pos}")
    sign, hours, minutes, _name = match.groups()
    offset = 0
    if sign:
        offset = (int(hours) * 60 + int(minutes or 0)) * 60_000 * (1 if sign == "+" else -1)
    fields["offset"] = offset
    return match.end()


def _to_millis(fields: dict) -> int:
    """The lenient calendar: each unit added to the one above it, from 1970-01-01T00:00 UTC."""
    months = fields.get("y", 1970) * 12 + fields.get("M", 1) - 1
    year, month = divmod(months, 12)
    if not 1 <= year <= 9999:
        raise ValueError(f"year {year} is outside 1-9999")
    if "D" in fields and "M" not in fields and "d" not in fields:
        days = datetime.date(year, 1, 1).toordinal() + fields["D"] - 1
    else:
        days = datetime.date(year, month + 1, 1).toordinal() + fields.get("d", 1) - 1
    hours = _hour_of_day(fields)
    millis = (
        (days - _EPOCH_ORDINAL) * _DAY_MS
        + hours * 3_600_000
        + fields.get("m", 0) * 60_000
        + fields.get("s", 0) * 1000
        + fields.get("S", 0)
    )
    return millis - fields.get("offset", 0)


def _hour_of_day(fields: dict) -> int:
    if "H" in fields:
        return fields["H"]
    if "k" in fields:
        return 0 if fields["k"] == 24 else fields["k"]
    twelve = fields.get("h", fields.get("K", 0)) % 12
    return twelve + (12 if fields.get("a") == 2 else 0)
