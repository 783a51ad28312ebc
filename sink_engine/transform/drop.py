"""Confluent's Drop$Key / Drop$Value: the key or the value set to null, its schema as `schema.behavior` says.

`schema.behavior`: `nullify` (the default) sets the schema to null too; `retain` keeps it as it is; `validate`
keeps it when it is optional and makes the record a bad one (TransformError) when it is not; `force_optional`
keeps an optional copy of it. A record without a schema there gets a null value and no schema.
"""

from __future__ import annotations

import dataclasses

from sink_engine.convert.schema import Schema
from sink_engine.transform.errors import TransformError
from sink_engine.transform.options import TransformOptions
from sink_engine.transform.record import TransformRecord
from sink_engine.transform.values import operand, with_operand

BEHAVIORS = ("nullify", "retain", "validate", "force_optional")


class Drop:
    def __init__(self, role: str, behavior: str):
        self.role, self.behavior = role, behavior

    @classmethod
    def from_options(cls, options: TransformOptions) -> Drop:
        return cls(options.role or "value", options.choice("schema.behavior", BEHAVIORS, "nullify"))

    def apply(self, record: TransformRecord) -> TransformRecord:
        _, schema = operand(record, self.role)
        return with_operand(record, self.role, None, None if schema is None else self._schema(schema))

    def _schema(self, schema: Schema) -> Schema | None:
        if self.behavior == "nullify":
            return None
        if self.behavior == "validate" and not schema.optional:
            raise TransformError(
                f"the {self.role} schema ({schema.describe()}) is not optional, and Drop's schema.behavior is validate"
            )
        if self.behavior == "force_optional" and not schema.optional:
            return dataclasses.replace(schema, optional=True)
        return schema
