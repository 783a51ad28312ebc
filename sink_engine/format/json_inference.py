"""Schemaless JSON to Arrow: infer one schema per file from its records, with deterministic rules.

Rules (the same for every file, so the same records always give the same schema and bytes):
- Every value must be a JSON object; its keys become top-level columns.
- Field order is the order in which keys are first seen, record by record (nested objects likewise).
- A missing key or `null` is a null; a field that is only ever null has Arrow type `null`.
- `true`/`false` -> bool; integers -> int64; integers with fractions, exponents or beyond int64 -> double,
  and a field holding both integers and doubles widens to double.
- Strings stay strings (ISO dates and timestamps are not reinterpreted).
- Objects -> struct (the union of their keys); arrays -> list of the merged element type.
- Any other mix in one field (number and string, bool and number, object and array, ...), and objects
  that are empty in every record, become a string column holding each value's compact JSON text.

The common case is columnar: `pyarrow.json` parses and infers in C++ with the same rules, and string
values that it would read as timestamps are re-read as strings. A file larger than one block is inferred
block by block, the blocks' schemas merged by the same rules, then each block read with the file's schema,
so only one block is in memory at a time. Only a file with a conflicting field (or an always-empty object)
takes the slower path in Python, with the whole file in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import orjson
import pyarrow as pa
import pyarrow.json as pa_json

_INT64 = (-(2**63), 2**63 - 1)
JSON_TEXT = "json"  # inferred tag of a field whose values are kept as their JSON text
# an inferred JSON type: a tag ("null", "bool", "int", "double", "string", JSON_TEXT), ("list", element) or
# ("struct", {name: type}); indexed by tag, so not spelled as a union
Inferred: TypeAlias = Any


def json_text_table(text: bytes, record_error: Callable[[int, str], Exception]) -> tuple:
    """Newline-delimited JSON objects in one block: the table, and a function giving the same rows as Python
    dicts fit for a row writer (Avro): the parsed documents where they match the schema (missing keys are
    nulls, integers stand for doubles), else normalized rows. `record_error(position, cause)` builds the
    error for a value that is not an object."""
    table, schema = block_schema(text)
    if schema is None or needs_python(schema):
        return rows_in_python(text, record_error)
    if table.schema != schema:
        table = read_block(text, schema)
    return table, lambda: documents(text)


def block_schema(block: bytes) -> tuple:
    """pyarrow's inference over one block: (the table as read, its schema with timestamps as strings), or
    (None, None) when a field's values conflict (the Python path)."""
    try:
        table = _read(block, None)
    except pa.ArrowInvalid:
        return None, None
    return table, _timestamps_as_strings(table.schema)


def merge_schemas(a: pa.Schema | None, b: pa.Schema) -> pa.Schema | None:
    """The schema of two blocks together by the module's rules (None first: nothing seen yet); None when a
    field's types conflict (the Python path)."""
    if a is None:
        return b
    merged = _merge_types(pa.struct(list(a)), pa.struct(list(b)))
    return None if merged is None else pa.schema(list(merged))


def needs_python(schema: pa.Schema) -> bool:
    """An object that is empty in every record cannot be a Parquet struct: the Python path makes it JSON text."""
    return _has(schema, lambda t: pa.types.is_struct(t) and t.num_fields == 0)


def read_block(block: bytes, schema: pa.Schema) -> pa.Table:
    """One block read with the file's schema (numbers widen to it, fields missing from the block are null)."""
    return _read(block, schema)


def documents(text: bytes) -> list:
    return [orjson.loads(line) for line in text.splitlines()]


def rows_in_python(text: bytes, record_error: Callable[[int, str], Exception]) -> tuple:
    """The slow path, over the whole file: (table, function giving the normalized rows)."""
    table, rows = _inferred_in_python(documents(text), record_error)
    return table, lambda: rows


def _merge_types(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    if a == b or pa.types.is_null(b):
        return a
    if pa.types.is_null(a):
        return b
    if {a, b} == {pa.int64(), pa.float64()}:
        return pa.float64()
    if pa.types.is_list(a) and pa.types.is_list(b):
        element = _merge_types(a.value_type, b.value_type)
        return None if element is None else pa.list_(a.value_field.with_type(element))
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fields = {f.name: f for f in a}
        for field in b:
            if field.name in fields:
                merged = _merge_types(fields[field.name].type, field.type)
                if merged is None:
                    return None
                fields[field.name] = fields[field.name].with_type(merged)
            else:
                fields[field.name] = field
        return pa.struct(list(fields.values()))
    return None


def _read(data: bytes, schema: pa.Schema | None) -> pa.Table:
    """Parse newline-delimited JSON in one block up to 2 GiB, on one thread (so inference sees the records
    in order, whatever the machine)."""
    block_size = min(max(len(data) + 1, 1 << 20), 2**31 - 1)
    read_options = pa_json.ReadOptions(use_threads=False, block_size=block_size)
    behavior = "infer" if schema is None else "error"
    parse_options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior=behavior)
    return pa_json.read_json(pa.BufferReader(data), read_options=read_options, parse_options=parse_options)


def _has(schema: pa.Schema, predicate: Callable[[pa.DataType], bool]) -> bool:
    def visit(arrow_type: pa.DataType) -> bool:
        if predicate(arrow_type):
            return True
        return any(visit(arrow_type.field(i).type) for i in range(arrow_type.num_fields))

    return any(visit(f.type) for f in schema)


def _timestamps_as_strings(schema: pa.Schema) -> pa.Schema:
    def replace(arrow_type: pa.DataType) -> pa.DataType:
        if pa.types.is_timestamp(arrow_type):
            return pa.string()
        if pa.types.is_struct(arrow_type):
            return pa.struct([f.with_type(replace(f.type)) for f in arrow_type])
        if pa.types.is_list(arrow_type):
            return pa.list_(arrow_type.value_field.with_type(replace(arrow_type.value_type)))
        return arrow_type

    return pa.schema([f.with_type(replace(f.type)) for f in schema])


def _inferred_in_python(documents: list, record_error: Callable[[int, str], Exception]) -> tuple[pa.Table, list]:
    inferred = "null"
    for position, document in enumerate(documents):
        if not isinstance(document, dict):
            raise record_error(
                position,
                f"Parquet and Avro output of schemaless JSON needs a JSON object value, got {type(document).__name__}",
            )
        inferred = merge(inferred, infer(document))
    fields = _finish(inferred)[1]
    rows = [normalize(document, ("struct", fields)) for document in documents]
    return pa.Table.from_struct_array(pa.array(rows, type=arrow_type(("struct", fields)))), rows


def infer(value: Any) -> Inferred:
    """The inferred type of one JSON value: a tag, ("list", element) or ("struct", {name: type})."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if _INT64[0] <= value <= _INT64[1] else "double"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        element = "null"
        for item in value:
            element = merge(element, infer(item))
        return ("list", element)
    return ("struct", {key: infer(item) for key, item in value.items()})


def merge(a: Inferred, b: Inferred) -> Inferred:
    """The type that holds values of both types (see the module's rules)."""
    if a == "null":
        return b
    if b == "null":
        return a
    if isinstance(a, str) and isinstance(b, str):
        return a if a == b else "double" if {a, b} == {"int", "double"} else JSON_TEXT
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "list":
        return ("list", merge(a[1], b[1]))
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "struct":
        fields = dict(a[1])
        for key, field_type in b[1].items():
            fields[key] = merge(fields[key], field_type) if key in fields else field_type
        return ("struct", fields)
    return JSON_TEXT


def _finish(inferred: Inferred) -> Inferred:
    """Objects that are empty everywhere become JSON text (Parquet cannot hold an empty struct)."""
    if isinstance(inferred, tuple) and inferred[0] == "list":
        return ("list", _finish(inferred[1]))
    if isinstance(inferred, tuple):
        if not inferred[1]:
            return JSON_TEXT
        return ("struct", {key: _finish(t) for key, t in inferred[1].items()})
    return inferred


def arrow_type(inferred: Inferred) -> pa.DataType:
    if isinstance(inferred, tuple) and inferred[0] == "list":
        return pa.list_(arrow_type(inferred[1]))
    if isinstance(inferred, tuple):
        return pa.struct([(key, arrow_type(t)) for key, t in inferred[1].items()])
    return {
        "null": pa.null(),
        "bool": pa.bool_(),
        "int": pa.int64(),
        "double": pa.float64(),
        "string": pa.string(),
        JSON_TEXT: pa.string(),
    }[inferred]


def normalize(value: Any, inferred: Inferred) -> object:
    """The value shaped to its inferred type: JSON text where the type is JSON_TEXT, floats for doubles."""
    if value is None:
        return None
    if inferred == JSON_TEXT:
        return orjson.dumps(value).decode("utf-8")
    if inferred == "double":
        return float(value)
    if isinstance(inferred, tuple) and inferred[0] == "list":
        return [normalize(item, inferred[1]) for item in value]
    if isinstance(inferred, tuple):
        return {key: normalize(value.get(key), t) for key, t in inferred[1].items()}
    return value
