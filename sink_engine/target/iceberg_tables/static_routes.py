"""Static routing (`iceberg.tables` with `iceberg.tables.dynamic-enabled` off), as the Iceberg Kafka Connect sink
routes (SinkWriter.routeRecordStatically, apache/iceberg kafka-connect/kafka-connect/src/main/java/org/apache/
iceberg/connect/data/SinkWriter.java): without `iceberg.tables.route-field` every record goes to every table of
`iceberg.tables`; with it, each record goes to every table whose `iceberg.table.<table>.route-regex` matches the
field's whole value (Pattern.matcher(value).matches(): a full match, case-sensitive), so to several tables or to
none; a record without the field (or with a null value) goes to none. A table without a route-regex then takes no
record. Records that go to no table are skipped: their offsets commit as the others'.

No pyiceberg import here: config validation uses this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError

ROUTE_REGEX_KEY = "iceberg.table.{}.route-regex"
TABLE_NAME = re.compile(r"[^.\s/]+(\.[^.\s/]+)+")  # namespace[.namespace...].table


@dataclass(frozen=True)
class StaticRoutes:
    """The tables of `iceberg.tables` and, with a route field, each one's route-regex (None: it takes no record)."""

    tables: tuple[str, ...]  # iceberg.tables
    field: str | None  # iceberg.tables.route-field
    regexes: tuple[re.Pattern[str] | None, ...]  # iceberg.table.<table>.route-regex, one per table

    def tables_for(self, value: str | None) -> tuple[str, ...]:
        """The tables a record goes to, given its route field's value (None: the record lacks the field)."""
        if self.field is None:
            return self.tables
        if value is None:
            return ()
        return tuple(t for t, regex in zip(self.tables, self.regexes, strict=True) if regex and regex.fullmatch(value))

    @classmethod
    def from_config(cls, config: SinkConfig, dynamic: bool) -> StaticRoutes | None:
        """None when records go to the one table (or `${topic}` pattern) of `iceberg.tables`, or name their tables
        (`dynamic`); ConfigError naming the key of a route-regex without a route field (or under dynamic routing),
        of a bad regex, of a table that is not `namespace.table`, or of a route field without route-regexes."""
        regexes = _route_regexes(config)
        field, tables = config["iceberg.tables.route-field"], tuple(config["iceberg.tables"] or ())
        if dynamic or not field:
            if regexes:
                raise ConfigError(
                    next(iter(regexes)),
                    "routes records only with iceberg.tables.route-field set and iceberg.tables.dynamic-enabled=false",
                )
            if dynamic or len(tables) < 2:
                return None
        if not tables:
            raise ConfigError("iceberg.tables", "lists the tables that iceberg.tables.route-field routes records to")
        if field and not regexes:
            raise ConfigError(
                "iceberg.tables.route-field",
                "routes each record to the tables of iceberg.tables whose iceberg.table.<table>.route-regex matches "
                "its value, and none is set; or set iceberg.tables.dynamic-enabled=true for the table it names",
            )
        for table in tables:
            if not TABLE_NAME.fullmatch(table) or "${topic}" in table:
                raise ConfigError("iceberg.tables", f"{table!r} is not `namespace.table` (one of several tables)")
        unknown = [key for key, table in regexes.items() if table not in tables]
        if unknown:
            raise ConfigError(unknown[0], "names a table that iceberg.tables does not list")
        by_table = {table: _compiled(key, config.passthrough[key]) for key, table in regexes.items()}
        return cls(tables, field or None, tuple(by_table.get(t) for t in tables))


def _route_regexes(config: SinkConfig) -> dict[str, str]:
    """route-regex key -> its table."""
    suffix = ".route-regex"
    return {
        key: key[len("iceberg.table.") : -len(suffix)]
        for key in config.passthrough
        if key.startswith("iceberg.table.") and key.endswith(suffix)
    }


def _compiled(key: str, regex: str) -> re.Pattern[str]:
    try:
        return re.compile(regex)
    except re.error as e:
        raise ConfigError(key, f"{regex!r} is not a regular expression: {e}") from None
