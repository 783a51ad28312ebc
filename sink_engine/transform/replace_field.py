"""ReplaceField (`$Key` / `$Value`): keeps, drops and renames the top-level fields of the key or value.

Options: `exclude` (fields to drop; wins over `include`), `include` (when set, only these are kept), `renames`
(`old:new,...`), `replace.null.with.default` (default true: kept nulls take their defaults). The deprecated
`blacklist` / `whitelist` (Kafka 2.6-3.9; removed in 4.0) are read as `exclude` / `include`; setting an old and a
new name to different lists is a ConfigError (Kafka used the new one and logged an error). Nested paths: Kafka's
ReplaceField has no `field.syntax.version` (KIP-821's V2 reaches only ExtractField), so neither does this one.

As in Kafka: a null operand passes unchanged; without a schema the operand must be a map, with one a struct; two
fields renamed to one name are an error with a schema. The new schema keeps the old one's name, version and
parameters; kept fields keep their schemas."""

from __future__ import annotations

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.schemas import SchemaCache, field_value, struct_of
from sink_engine.transform.values import operand, require_map, require_struct, with_operand

PURPOSE = "field replacement"


class ReplaceField:
    def __init__(
        self,
        role: str,
        exclude: frozenset[str] = frozenset(),
        include: frozenset[str] = frozenset(),
        renames: dict[str, str] | None = None,
        replace_null_with_default: bool = True,
    ):
        self.role, self.exclude, self.include = role, exclude, include
        self.renames = renames or {}
        self.replace_null_with_default = replace_null_with_default
        self._schemas = SchemaCache(self._updated)

    @classmethod
    def from_options(cls, options: TransformOptions) -> ReplaceField:
        return cls(
            options.role or "value",
            frozenset(_list(options, "exclude", "blacklist")),
            frozenset(_list(options, "include", "whitelist")),
            parse_renames(options),
            options.boolean("replace.null.with.default", True),
        )

    def apply(self, record: TransformRecord) -> TransformRecord:
        value, schema = operand(record, self.role)
        if value is None:
            return record
        if schema is None:
            updated = {
                self._renamed(name): item for name, item in require_map(value, PURPOSE).items() if self._kept(name)
            }
            return with_operand(record, self.role, updated, None)
        require_struct(value, schema, PURPOSE)
        updated_schema, sources = self._schemas.get(schema)
        updated = {
            field.name: field_value(value, source, self.replace_null_with_default)
            for field, source in zip(updated_schema.fields, sources)
        }
        return with_operand(record, self.role, updated, updated_schema)

    def _kept(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def _renamed(self, name: str) -> str:
        return self.renames.get(name, name)

    def _updated(self, schema: Schema) -> tuple[Schema, tuple[Field, ...]]:
        """The new schema and, per new field, the field of `schema` it comes from."""
        sources = tuple(field for field in schema.fields if self._kept(field.name))
        return struct_of([(self._renamed(field.name), field.schema) for field in sources], like=schema), sources


def parse_renames(options: TransformOptions) -> dict[str, str]:
    """`renames` as old -> new; an item that is not one `old:new` pair is a ConfigError (Java's split, which
    drops trailing empty parts, so `a:` is refused and `:a` renames the empty name)."""
    renames: dict[str, str] = {}
    for mapping in options.strings("renames"):
        parts = mapping.split(":")
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise ConfigError(options.key("renames"), f"invalid rename mapping {mapping!r} (expected old:new)")
        renames[parts[0]] = parts[1]
    return renames


def _list(options: TransformOptions, name: str, deprecated: str) -> tuple[str, ...]:
    current, old = options.strings(name), options.strings(deprecated)
    if name in options.values and deprecated in options.values and current != old:
        raise ConfigError(
            options.key(deprecated),
            f"is the deprecated name of {options.key(name)}, which is set "
            f"to another value: set only {options.key(name)}",
        )
    return current if name in options.values else old
