"""Java `.properties` text (a Kafka Connect worker's `connect-distributed.properties`) as `java.util.Properties.load`
reads it: `key=value`, `key: value` or `key value`; `#` and `!` comment lines; a line ending in an odd number of
backslashes continues on the next (its leading blanks dropped); `\\t`, `\\n`, `\\r`, `\\f`, `\\uXXXX` escapes, any
other escaped character itself; the last of a repeated key wins, as in Java."""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_NAMED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
# the key ends at the first unescaped '=', ':' or blank; blanks around the separator are dropped
_SPLIT = re.compile(r"^((?:[^\\=:\s]|\\.)*)\s*[=:]?\s*", re.DOTALL)


def parse_properties(text: str) -> dict[str, str]:
    """The key/value pairs of `text`, in file order."""
    pairs: dict[str, str] = {}
    for line in _logical_lines(text):
        match = _SPLIT.match(line)
        assert match is not None  # the pattern matches any line (possibly empty)
        pairs[_unescape(match.group(1))] = _unescape(line[match.end() :])
    return pairs


def _logical_lines(text: str) -> list[str]:
    lines, pending = [], ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _unescape(text: str) -> str:
    def one(match: re.Match) -> str:
        escaped = match.group(1)
        if escaped.startswith("u") and len(escaped) == 5:
            return chr(int(escaped[1:], 16))
        return _NAMED.get(escaped, escaped)

    return _ESCAPE.sub(one, text)
