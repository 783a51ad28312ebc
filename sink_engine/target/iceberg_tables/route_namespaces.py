"""The namespaces fan-out by field may reach (`iceberg.tables.route-namespaces`) and the namespace of a bare table
name (`iceberg.tables.default-namespace`): what a connector declares so that a deployed job role can be granted its
tables' Glue databases or S3 Tables namespaces before any record names them (infra/iceberg.py), and what a task
holds each record's table to (target/iceberg_tables/routing.py's TableRoutes): a table outside them is a bad record
naming its offset, never a permission error from AWS in the middle of a commit.

The Iceberg Kafka Connect sink has neither key: its route field must hold `namespace.table` (apache/iceberg issues
12269 and 14530 ask for a namespace for bare names). The names follow its `iceberg.tables.default-*` keys.

No pyiceberg import here: config validation uses this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError

DEFAULT_KEY: Final = "iceberg.tables.default-namespace"
DECLARED_KEY: Final = "iceberg.tables.route-namespaces"
_NAMESPACE = re.compile(r"[^.\s/]+(\.[^.\s/]+)*")  # namespace[.namespace...], as a table name's namespace part


@dataclass(frozen=True)
class RouteNamespaces:
    """`default`: the namespace of a bare table name (None: such a name is refused); `declared`: the namespaces a
    route may reach, `default` among them (empty: any namespace, nothing declared)."""

    default: str | None = None
    declared: tuple[str, ...] = ()

    def identifier(self, table: str) -> str:
        """`table` (a route field's lower-cased value) as `namespace.table`: a bare name in `default`'s namespace;
        as it is otherwise (the caller checks its form)."""
        return f"{self.default}.{table}" if self.default and "." not in table else table

    def outside(self, identifier: str) -> str | None:
        """Why the table `identifier` (`namespace.table`) may not be written, or None when its namespace is
        declared (or nothing is)."""
        namespace = identifier.rsplit(".", 1)[0]
        if not self.declared or namespace in self.declared:
            return None
        return (
            f"names table {identifier}, whose namespace {namespace} is not one the connector declares "
            f"({', '.join(self.declared)}: {DECLARED_KEY}, {DEFAULT_KEY})"
        )

    @classmethod
    def from_config(cls, config: SinkConfig, dynamic: bool) -> RouteNamespaces:
        """ConfigError naming the key when either is set without fan-out by field (`dynamic`), or names a namespace
        that is not `a[.b...]` or not lower case (route values are lower-cased, so it would never be reached)."""
        default, listed = config[DEFAULT_KEY], tuple(config[DECLARED_KEY] or ())
        for key, value in ((DEFAULT_KEY, default), (DECLARED_KEY, listed)):
            if value and not dynamic:
                raise ConfigError(key, "applies to fan-out by field only (iceberg.tables.dynamic-enabled=true)")
        named = [(DEFAULT_KEY, default)] if default else []
        for key, name in named + [(DECLARED_KEY, n) for n in listed]:
            if not _NAMESPACE.fullmatch(name):
                raise ConfigError(key, f"{name!r} is not a namespace (`name`, or `a.b` for nested namespaces)")
            if name != name.lower():
                raise ConfigError(
                    key,
                    f"{name!r}: route values are lower-cased (as the Iceberg sink reads them); write it in lower case",
                )
        declared = tuple(dict.fromkeys([name for _, name in named] + list(listed)))
        return cls(default or None, declared)
