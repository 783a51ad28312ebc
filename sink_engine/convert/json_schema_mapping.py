"""JSON Schema documents as Connect schemas, following Confluent's JsonSchemaData.

- `object` with `properties` -> struct named by its `title`, fields in `properties` order, optional unless
  listed in `required`; `object` with only `additionalProperties` (a schema) -> map of string keys.
- `array` -> array of its `items`; `string` -> string, with `format: date-time` / `date` -> ISO_TIMESTAMP /
  ISO_DATE (schema.py: the text is kept, columnar formats write a timestamp / date); `integer` -> int64,
  `number` -> float64, `boolean` -> boolean. `connect.type` (int8..int64, float32, float64, bytes) narrows a
  type as JsonSchemaData writes it; `title` org.apache.kafka.connect.data.Decimal / Date / Time / Timestamp
  (with `connect.parameters`) gives those logical types.
- A `type` list, `oneOf` or `anyOf` with `null` makes the rest optional; more than one other branch is a
  struct named `io.confluent.connect.json.OneOf` with one optional field per branch
  (`io.confluent.connect.json.OneOf.field.<i>`), the value setting the first branch that reads it.
- `enum` / `const` take the type of their values; `allOf` of one schema is that schema.
- `$ref` is resolved in the document (`#/definitions/...`, `#/$defs/...`) and in the referenced schemas
  (registered under their reference names); a schema that refers to itself has no finite Connect schema.
- `default` becomes the field's default. Anything else (a schema `true`, `allOf` of several, a type-less
  schema) is a ValueError naming its JSON pointer.
"""

from __future__ import annotations

from typing import Any

import referencing
import referencing.jsonschema
from referencing._core import Resolver
from referencing.exceptions import Unresolvable

from sink_engine.convert.connect_json import ONE_OF, compile_decoder
from sink_engine.convert.schema import DATE, DECIMAL, ISO_DATE, ISO_TIMESTAMP, TIME, TIMESTAMP, Field, Schema

DEFAULT_SPECIFICATION = referencing.jsonschema.DRAFT7
_CONNECT_TYPES = ("int8", "int16", "int32", "int64", "float32", "float64", "bytes", "string", "boolean")
_TYPES = {"string": "string", "integer": "int64", "number": "float64", "boolean": "boolean"}
_FORMATS = {"date-time": ISO_TIMESTAMP, "date": ISO_DATE}
_TITLED = {DECIMAL: "bytes", DATE: "int32", TIME: "int32", TIMESTAMP: "int64"}


def resource_registry(references: dict[str, Any]) -> referencing.Registry:
    """A registry of the referenced schemas (reference name -> parsed document)."""
    registry = referencing.Registry()
    for name, document in references.items():
        registry = registry.with_resource(name, _resource(document))
    return registry


def connect_schema(document: Any, version: int | None, references: referencing.Registry | None = None) -> Schema:
    """The Connect schema of a JSON Schema document, resolving `$ref`s in it and in `references`."""
    resolver = (references or referencing.Registry()).resolver_with_root(_resource(document))
    schema = _Mapper().map(document, resolver, "#")
    return Schema(**{**schema.__dict__, "optional": False, "version": version})


def _resource(document: Any) -> referencing.Resource:
    return referencing.Resource.from_contents(document, default_specification=DEFAULT_SPECIFICATION)


class _Mapper:
    def __init__(self) -> None:
        self._resolving: list[int] = []  # the $ref targets being mapped (a repeat is a cycle)

    def map(self, node: Any, resolver: Resolver, pointer: str, optional: bool = False) -> Schema:
        if not isinstance(node, dict):
            raise ValueError(f"{pointer}: a schema must be an object here, got {node!r:.60}")
        if "$ref" in node:
            return self._reference(node, resolver, pointer, optional)
        branches = node.get("oneOf") or node.get("anyOf")
        if branches is not None or isinstance(node.get("type"), list):
            return self._union(node, branches, resolver, pointer, optional)
        if "allOf" in node:
            if len(node["allOf"]) != 1:
                raise ValueError(f"{pointer}: allOf of {len(node['allOf'])} schemas is not supported")
            return self.map(node["allOf"][0], resolver, f"{pointer}/allOf/0", optional)
        schema = self._typed(node, _type_of(node, pointer), resolver, pointer, optional)
        if node.get("default") is not None:
            default = compile_decoder(schema)(node["default"], f"{pointer}/default")
            schema = Schema(**{**schema.__dict__, "default": default})
        return schema

    def _reference(self, node: dict, resolver: Resolver, pointer: str, optional: bool) -> Schema:
        try:
            resolved = resolver.lookup(node["$ref"])
        except Unresolvable:
            raise ValueError(
                f"{pointer}: $ref {node['$ref']!r} is neither in the schema nor in its references"
            ) from None
        if id(resolved.contents) in self._resolving:
            raise ValueError(
                f"{pointer}: $ref {node['$ref']!r} refers to itself (a recursive schema has no Connect schema)"
            )
        self._resolving.append(id(resolved.contents))
        try:
            return self.map(resolved.contents, resolved.resolver, node["$ref"], optional)
        finally:
            self._resolving.pop()

    def _union(self, node: dict, branches: list | None, resolver: Resolver, pointer: str, optional: bool) -> Schema:
        if branches is None:  # "type": [..] is a union of the same schema with each type
            branches = [{**{k: v for k, v in node.items() if k != "type"}, "type": t} for t in node["type"]]
        others = [(i, b) for i, b in enumerate(branches) if not (isinstance(b, dict) and b.get("type") == "null")]
        optional = optional or len(others) < len(branches)
        if len(others) == 1:
            index, branch = others[0]
            merged = {**{k: v for k, v in node.items() if k not in ("oneOf", "anyOf", "type")}, **branch}
            return self.map(merged, resolver, f"{pointer}/{index}", optional)
        fields = tuple(
            Field(f"{ONE_OF}.field.{n}", self.map(b, resolver, f"{pointer}/{i}", optional=True))
            for n, (i, b) in enumerate(others)
        )
        return Schema("struct", optional, name=ONE_OF, fields=fields)

    def _typed(self, node: dict, kind: str, resolver: Resolver, pointer: str, optional: bool) -> Schema:
        if kind == "object":
            return self._object(node, resolver, pointer, optional)
        if kind == "array":
            if not isinstance(node.get("items"), dict):
                raise ValueError(f"{pointer}: an array needs one `items` schema")
            return Schema("array", optional, items=self.map(node["items"], resolver, f"{pointer}/items"))
        title = node.get("title")
        if title in _TITLED:
            return Schema(_TITLED[title], optional, name=title, parameters=_parameters(node))
        connect_type = node.get("connect.type")
        if connect_type is not None:
            if connect_type not in _CONNECT_TYPES:
                raise ValueError(f"{pointer}: connect.type {connect_type!r} is not supported")
            return Schema(connect_type, optional)
        if kind == "string" and node.get("format") in _FORMATS:
            return Schema("string", optional, name=_FORMATS[node["format"]])
        return Schema(_TYPES[kind], optional)

    def _object(self, node: dict, resolver: Resolver, pointer: str, optional: bool) -> Schema:
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if not properties and isinstance(extra, dict):
            values = self.map(extra, resolver, f"{pointer}/additionalProperties")
            return Schema("map", optional, keys=Schema("string"), values=values)
        required = set(node.get("required", ()))
        fields = tuple(
            Field(name, self.map(sub, resolver, f"{pointer}/properties/{name}", name not in required))
            for name, sub in (properties or {}).items()
        )
        return Schema("struct", optional, name=node.get("title"), fields=fields)


def _type_of(node: dict, pointer: str) -> str:
    kind = node.get("type")
    if kind is None and node.get("properties") is not None:
        kind = "object"
    if kind is None and ("enum" in node or "const" in node):
        values = node.get("enum", [node.get("const")])
        kinds = {_json_type(v) for v in values if v is not None}
        if len(kinds) == 1:
            kind = kinds.pop()
    if kind not in ("object", "array", *_TYPES):
        raise ValueError(f"{pointer}: a schema of type {kind!r} has no Connect type")
    return kind


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", dict: "object", list: "array"}.get(type(value), "null")


def _parameters(node: dict) -> tuple:
    parameters = node.get("connect.parameters") or {}
    return tuple(sorted((str(k), str(v)) for k, v in parameters.items()))
