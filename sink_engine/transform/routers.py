"""Kafka Connect's routers: they change a record's topic, which names its objects' directory and its Iceberg
table, as in Connect (storage/naming.py keeps two source topics routed to one name apart)."""

from __future__ import annotations

import re

from sink_engine.errors import ConfigError
from sink_engine.transform.date_format import DateFormat
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.predicates import java_regex
from sink_engine.transform.record import TransformRecord


class RegexRouter:
    """`regex` (matching the whole topic) and `replacement` (Java's syntax: `$1`, `${name}`, `\\$` for a `$`);
    a topic the regex does not match is kept."""

    def __init__(self, regex: re.Pattern, replacement: list):
        self._regex, self._replacement = regex, replacement

    @classmethod
    def from_options(cls, options: TransformOptions) -> RegexRouter:
        regex = java_regex(options.string("regex"), options.key("regex"))
        replacement = options.values.get("replacement")
        if replacement is None:
            raise ConfigError(options.key("replacement"), "is required")
        return cls(regex, java_replacement(str(replacement), regex, options.key("replacement")))

    def route(self, topic: str) -> str:
        match = self._regex.fullmatch(topic)
        if match is None:
            return topic
        return "".join(part if isinstance(part, str) else (match.group(part[0]) or "") for part in self._replacement)

    def apply(self, record: TransformRecord) -> TransformRecord:
        return record.with_changes(topic=self.route(record.topic))


def java_replacement(text: str, regex: re.Pattern, key: str) -> list:
    """Java's Matcher replacement string as literal texts and group references (1-tuples of a number or name), checked
    against `regex` as Matcher.appendReplacement checks it; ConfigError naming `key`."""
    parts: list = []
    literal, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 == len(text):
                raise ConfigError(key, f"{text!r} ends with an escaping backslash")
            literal.append(text[i + 1])
            i += 2
            continue
        if char != "$":
            literal.append(char)
            i += 1
            continue
        i += 1
        if i == len(text):
            raise ConfigError(key, f"{text!r}: a group index or name must follow $")
        if text[i] == "{":
            end = text.find("}", i)
            name = text[i + 1 : end] if end > 0 else ""
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
                raise ConfigError(key, f"{text!r}: ${{...}} must hold a group name")
            if name not in regex.groupindex:
                raise ConfigError(key, f"{text!r}: the regex has no group named {name!r}")
            reference: int | str = name
            i = end + 1
        else:
            if not text[i].isdigit():
                raise ConfigError(key, f"{text!r}: a group index or name must follow $")
            reference = int(text[i])
            if reference > regex.groups:
                raise ConfigError(key, f"{text!r}: the regex has no group {reference}")
            i += 1
            while i < len(text) and text[i].isdigit() and reference * 10 + int(text[i]) <= regex.groups:
                reference = reference * 10 + int(text[i])  # Java takes the longest group number that exists
                i += 1
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append((reference,))
    if literal:
        parts.append("".join(literal))
    return parts


class TimestampRouter:
    """`topic.format` (default `${topic}-${timestamp}`) with `${timestamp}` the record's timestamp formatted in UTC by
    `timestamp.format` (default `yyyyMMdd`), a java.text.SimpleDateFormat pattern as Kafka's TimestampRouter reads
    it (transform/date_format.py). A record without a timestamp cannot be routed (TransformError)."""

    def __init__(self, topic_format: str, timestamp_format: DateFormat):
        self._topic_format, self._format = topic_format, timestamp_format

    @classmethod
    def from_options(cls, options: TransformOptions) -> TimestampRouter:
        topic_format = options.values.get("topic.format")
        pattern = options.values.get("timestamp.format")
        try:
            timestamp_format = DateFormat("yyyyMMdd" if pattern is None else str(pattern))
        except ValueError as e:
            raise ConfigError(
                options.key("timestamp.format"), f"{pattern!r} is not a SimpleDateFormat pattern: {e}"
            ) from None
        return cls("${topic}-${timestamp}" if topic_format is None else str(topic_format), timestamp_format)

    def apply(self, record: TransformRecord) -> TransformRecord:
        if record.timestamp is None:
            raise TransformError("the record has no timestamp to route by")
        try:
            stamp = self._format.format(record.timestamp)
        except ValueError as e:
            raise TransformError(f"the record's timestamp cannot be formatted: {e}") from None
        return record.with_changes(
            topic=self._topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp)
        )
