"""What a transformed value is written as (task/transforms.py's column kinds)."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import DATE, Field, Schema
from sink_engine.errors import TransformationError
from sink_engine.task.transforms import _kind, column
from tests.unit.transform.helpers import record

POINT = Schema("struct", name="Point", fields=(Field("x", Schema("int32")),))


@pytest.mark.parametrize(
    "value, schema, input_kind, kind",
    [
        ({"x": 1}, POINT, "struct", "struct"),
        ({"x": 1}, POINT, "json", "struct"),  # a transform gave a schemaless value a schema
        ({"x": 1}, None, "struct", "json"),  # ... or took it away
        ("text", Schema("string"), "struct", "string"),  # ExtractField of a string field
        (b"\x00", Schema("bytes"), "struct", "bytes"),
        (7, Schema("int64"), "struct", "json"),
        ([1, 2], Schema("array", items=Schema("int32")), "struct", "json"),
        ("text", None, "string", "string"),
        ("text", None, "json", "json"),  # a JSON string stays JSON
        (b"raw", None, "bytes", "bytes"),
        ([1], None, "json", "json"),
        (None, None, "json", None),
    ],
)
def test_a_value_is_written_as_its_kind(value, schema, input_kind, kind):
    assert _kind(record(value=value, value_schema=schema), input_kind) == kind


def test_a_logical_type_as_a_whole_value_cannot_be_written():
    with pytest.raises(TransformationError, match="Date after transforms"):
        _kind(record(value=19000, value_schema=Schema("int32", name=DATE), offset=5), "struct")


def test_json_values_keep_their_text_unless_changed():
    records = [record(value={"a": 1}), record(value={"b": 2})]
    values = column(records, "json", [b'{ "a" : 1 }', None])
    assert values.items == [b'{ "a" : 1 }', b'{"b":2}'] and values.documents() == [{"a": 1}, {"b": 2}]


def test_a_struct_column_carries_each_schema():
    values = column([record(value={"x": 1}, value_schema=POINT)], "struct")
    assert (values.kind, values.items, values.schemas) == ("struct", [{"x": 1}], [POINT])
