"""RegexRouter and TimestampRouter, with Kafka's RegexRouterTest and TimestampRouterTest cases."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.routers import RegexRouter, TimestampRouter
from tests.unit.transform.helpers import options, record


def regex_route(regex: str, replacement: str, topic: str) -> str:
    router = RegexRouter.from_options(options(regex=regex, replacement=replacement))
    return router.apply(record(topic)).topic


@pytest.mark.parametrize(
    "regex, replacement, topic, routed",
    [
        ("foo", "bar", "foo", "bar"),  # staticReplacement
        ("foo", "bar", "orig", "orig"),  # doesntMatch
        ("(.*)", "$1", "orig", "orig"),  # identity
        ("(.*)", "prefix-$1", "orig", "prefix-orig"),  # addPrefix
        ("(.*)", "$1-suffix", "orig", "orig-suffix"),  # addSuffix
        (r"(.*)-(\d\d\d\d\d\d\d\d)", "$1", "index-20160117", "index"),  # slice
        ("fo", "bar", "foo", "foo"),  # the regex must match the whole topic
        ("(?<name>.*)-x", "${name}-y", "a-x", "a-y"),  # Java's named groups
        ("(.*)", r"\$1-$1", "a", "$1-a"),  # \$ is a literal dollar
        ("(.*)", r"a\\b", "t", r"a\b"),  # \\ is a literal backslash
        ("(a)", "$10", "a", "a0"),  # Java reads the longest group number that exists
        ("(a)|(b)", "[$2]", "a", "[]"),  # a group that did not take part gives nothing
    ],
)
def test_regex_router_routes_as_kafka(regex, replacement, topic, routed):
    # given a RegexRouter, when it routes a topic, then the topic is Kafka's
    assert regex_route(regex, replacement, topic) == routed


@pytest.mark.parametrize(
    "values, key",
    [
        ({"regex": "(", "replacement": "x"}, "transforms.t.regex"),
        ({"replacement": "x"}, "transforms.t.regex"),
        ({"regex": "a"}, "transforms.t.replacement"),
        ({"regex": "(a)", "replacement": "$2"}, "transforms.t.replacement"),
        ({"regex": "(a)", "replacement": "$"}, "transforms.t.replacement"),
        ({"regex": "(a)", "replacement": "${nope}"}, "transforms.t.replacement"),
    ],
)
def test_a_bad_regex_router_option_names_its_key(values, key):
    with pytest.raises(ConfigError) as raised:
        RegexRouter.from_options(options(**{k.replace(".", "_"): v for k, v in values.items()}))
    assert raised.value.key == key


def test_timestamp_router_defaults_as_kafka():
    # given TimestampRouter's defaults (TimestampRouterTest.defaultConfiguration)
    router = TimestampRouter.from_options(options())
    # then the topic is <topic>-yyyyMMdd of the UTC timestamp
    assert router.apply(record("test", timestamp=1483425001864)).topic == "test-20170103"


@pytest.mark.parametrize(
    "topic_format, timestamp_format, routed",
    [
        ("${timestamp}_${topic}", "yyyy-MM-dd'T'HH", "2017-01-03T06_test"),
        ("${topic}.${timestamp}", "yyyyMMddHHmmssSSS", "test.20170103063001864"),
        ("x-${timestamp}", "yy MMM dd EEE a", "x-17 Jan 03 Tue AM"),
    ],
)
def test_timestamp_router_formats_as_simple_date_format(topic_format, timestamp_format, routed):
    router = TimestampRouter.from_options(options(topic_format=topic_format, timestamp_format=timestamp_format))
    assert router.apply(record("test", timestamp=1483425001864)).topic == routed


def test_a_record_without_timestamp_cannot_be_routed_by_time():
    with pytest.raises(TransformError, match="no timestamp"):
        TimestampRouter.from_options(options()).apply(record("test", timestamp=None))


@pytest.mark.parametrize("pattern", ["yyyy-qq", "yyyy-bb", "'open"])
def test_a_timestamp_format_java_refuses_names_its_key(pattern):
    with pytest.raises(ConfigError) as raised:
        TimestampRouter.from_options(options(timestamp_format=pattern))
    assert raised.value.key == "transforms.t.timestamp.format"


@pytest.mark.parametrize(
    "pattern, stamp",
    [
        # 2017-01-03T06:30:01.864Z, a Tuesday: SimpleDateFormat's week year, week, one-letter milliseconds, day number
        # of the week and ISO zone, as Kafka's TimestampRouter (a SimpleDateFormat in UTC) writes them
        ("YYYY", "2017"),
        ("yyyy-ww", "2017-01"),
        ("HH:mm:ss.S", "06:30:01.864"),
        ("u", "2"),
        ("yyyyMMddX", "20170103Z"),
    ],
)
def test_timestamp_router_reads_every_simple_date_format_letter(pattern, stamp):
    router = TimestampRouter.from_options(options(timestamp_format=pattern))
    assert router.apply(record("t", timestamp=1483425001864)).topic == f"t-{stamp}"


def test_quoted_letters_are_text():
    router = TimestampRouter.from_options(options(timestamp_format="'Y'yyyy'w'"))
    assert router.apply(record("t", timestamp=1483425001864)).topic == "t-Y2017w"
