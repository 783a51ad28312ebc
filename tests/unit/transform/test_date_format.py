"""DateFormat formats and parses SimpleDateFormat patterns in UTC as Java does (outputs checked against Java's)."""

from __future__ import annotations

import datetime

import pytest

from sink_engine.transform.date_format import DateFormat

MILLIS = 1_700_000_000_123  # 2023-11-14T22:13:20.123Z, a Tuesday


@pytest.mark.parametrize(
    "pattern, text",
    [
        ("yyyy MM dd HH mm ss SSS z", "2023 11 14 22 13 20 123 UTC"),
        ("yyyy-MM-dd HH:mm:ss", "2023-11-14 22:13:20"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2023-11-14T22:13:20.123+0000"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2023-11-14T22:13:20.123Z"),
        ("yyyyMMddHHmmss", "20231114221320"),
        ("dd/MM/yy", "14/11/23"),
        ("EEE, d MMM yyyy hh:mm:ss a", "Tue, 14 Nov 2023 10:13:20 PM"),
        ("EEEE d MMMM yyyy", "Tuesday 14 November 2023"),
        ("yyyy-MM-dd'T'HH:mm:ss zzzz", "2023-11-14T22:13:20 Coordinated Universal Time"),
        ("h 'o''clock' a", "10 o'clock PM"),
        ("D u k K G", "318 2 22 10 AD"),
        ("SSSSSS", "000123"),  # S counts milliseconds, zero-padded (not a fraction)
    ],
)
def test_format(pattern, text):
    assert DateFormat(pattern).format(MILLIS) == text


@pytest.mark.parametrize(
    "pattern, text, millis",
    [
        ("yyyy MM dd HH mm ss SSS z", "1970 01 02 00 00 01 234 UTC", 86_401_234),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2023-11-14T23:13:20.123+0100", MILLIS),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2023-11-14T17:13:20.123-05:00", MILLIS),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2023-11-14T22:13:20.123Z", MILLIS),
        ("yyyyMMddHHmmssSSS", "20231114221320123", MILLIS),  # abutting fields take their letter count
        ("EEE, d MMM yyyy hh:mm:ss.SSS a", "tue, 14 nov 2023 10:13:20.123 pm", MILLIS),
        ("dd MMMM yy HH:mm:ss.SSS", "14 November 23 22:13:20.123", MILLIS),
        ("yyyy-MM-dd", "2023-13-01", 1_704_067_200_000),  # lenient: month 13 is January of the next year
        ("yyyy-MM-dd", "2023-11-14 and more", 1_699_920_000_000),  # text after the pattern is ignored
        ("dd/MM/yy", "01/01/46", -757_382_400_000),  # 1946
        ("dd/MM/yy", "01/01/45", 2_366_841_600_000),  # 2045
    ],
)
def test_parse(pattern, text, millis):
    assert DateFormat(pattern).parse(text) == millis


@pytest.mark.parametrize(
    "pattern, text",
    [
        ("yyyy-MM-dd", "2023/11/14"),
        ("yyyy-MM-dd", "x"),
        ("MMM yyyy", "Foo 2023"),
        ("yyyyMMdd", "202311"),
    ],
)
def test_text_that_does_not_match_is_a_value_error(pattern, text):
    with pytest.raises(ValueError):
        DateFormat(pattern).parse(text)


@pytest.mark.parametrize("pattern", ["bad-format", "yyyy'T", "yyyy-MM-dd b"])
def test_patterns_java_refuses_or_not_built_are_value_errors(pattern):
    with pytest.raises(ValueError):
        DateFormat(pattern)


@pytest.mark.parametrize(
    "day, text",
    [
        ("2023-12-31", "2023 2024 01 6 5"),  # a Sunday: week 1 of week year 2024 (the classic YYYY mistake)
        ("2024-12-28", "2024 2024 52 4 4"),
        ("2024-12-29", "2024 2025 01 5 5"),
        ("2023-11-14", "2023 2023 46 3 2"),
    ],
)
def test_week_fields_format_as_javas_us_weeks(day, text):
    millis = (datetime.date.fromisoformat(day) - datetime.date(1970, 1, 1)).days * 86_400_000
    assert DateFormat("yyyy YYYY ww W F").format(millis) == text


def test_parsing_week_fields_is_not_built():
    with pytest.raises(ValueError, match="week"):
        DateFormat("YYYY-MM-dd").parse("2023-11-14")
