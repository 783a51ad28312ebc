"""Reading (nested) fields of record values, and writing field values into key path segments.

Values are the converted documents (`ValueColumn.documents()`): dicts for schemaless JSON objects and for
records with a schema alike. A field name `a.b` reads field `b` of the map or struct in field `a`.

Escaping of field values in keys follows Hive and Spark (`ExternalCatalogUtils.escapePathName`), so that
Athena, Glue and Spark read the partition values back unescaped: each of the characters
`" # % ' * / : = ? \\ { [ ] ^`, DEL, the control characters U+0000-U+001F and any character of
`directory.delim` becomes `%XX` (its code in upper-case hex; characters above U+00FF as `%uXXXX`).
Every other character, non-ASCII included, is kept.
"""

from __future__ import annotations

from collections.abc import Callable

from sink_engine.errors import RecordError

MISSING = object()
_HIVE_SPECIAL = set("\"#%'*/:=?\\{[]^\x7f") | {chr(c) for c in range(0x20)}


def field_path(name: str) -> tuple[str, ...]:
    return tuple(name.split("."))


def lookup(document: object, path: tuple[str, ...]) -> object:
    """The value at the path: null below a null parent (an optional struct not set), as storage-common's
    DataUtils.getNestedFieldValue gives it (FieldPartitionerTest.testNestedNullPartition,
    testNestedMissingPartition); MISSING when a step is absent or not a map/struct."""
    for step in path:
        if document is None:
            return None
        if not isinstance(document, dict) or step not in document:
            return MISSING
        document = document[step]
    return document


def lookup_all(documents: list, path: tuple[str, ...]) -> list:
    """`lookup` of every document (a top-level field without a call per record)."""
    if len(path) > 1:
        return [lookup(d, path) for d in documents]
    step = path[0]
    return [d.get(step, MISSING) if type(d) is dict else MISSING for d in documents]


class FieldError(RecordError):
    """A record whose partitioning or timestamp field is missing or unreadable; names the field."""

    def __init__(self, topic: str, partition: int, offset: int, field: str, problem: str):
        self.field = field
        super().__init__(topic, partition, offset, f"field '{field}' {problem}")


class Escaper:
    """Escapes field values for key path segments (see the module doc)."""

    def __init__(self, directory_delim: str):
        self._special = _HIVE_SPECIAL | set(directory_delim)
        self._cache: dict[str, str] = {}

    def escape(self, text: str) -> str:
        escaped = self._cache.get(text)
        if escaped is None:
            escaped = "".join(_percent(c) if c in self._special else c for c in text)
            if len(self._cache) < 100_000:
                self._cache[text] = escaped
        return escaped


def _percent(char: str) -> str:
    code = ord(char)
    return f"%{code:02X}" if code <= 0xFF else f"%u{code:04X}"


def memoized_by_string(raw: list, compute: Callable[[int, object], str], memo: dict[str, str], limit: int) -> list:
    """`compute(i, value)` of each raw field value, remembered in `memo` for string values (they repeat in practice:
    a region, a table's name), at most `limit` of them."""
    result = []
    for i, value in enumerate(raw):
        found = memo.get(value) if type(value) is str else None
        if found is None:
            found = compute(i, value)
            if type(value) is str and len(memo) < limit:
                memo[value] = found
        result.append(found)
    return result


def scalar_text(value: object) -> str | None:
    """The text of a partitioning value: `null`, `true`/`false`, numbers as written; None for maps/lists."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None
