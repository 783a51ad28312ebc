"""schema.compatibility decisions and projection (Confluent semantics), without I/O."""

from __future__ import annotations

import pytest

from sink_engine.convert.projection import ProjectionError, project
from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import RecordError
from sink_engine.records import Partitions, ValueColumn
from sink_engine.target.s3_objects.schema_gate import SchemaGate, changes_schema

V1 = Schema("struct", name="Ev", version=1, fields=(Field("id", Schema("int32")),))
V2 = Schema(
    "struct",
    name="Ev",
    version=2,
    fields=(
        Field("id", Schema("int64")),
        Field("note", Schema("string", default="none")),
        Field("score", Schema("float64", optional=True)),
    ),
)
V3_REQUIRED = Schema(
    "struct", name="Ev", version=3, fields=(Field("id", Schema("int64")), Field("must", Schema("string")))
)
P = Partitions.one("p")  # every record in one encoded partition


@pytest.mark.parametrize(
    "mode, schema, current, expected",
    [
        ("none", V2, V1, True),
        ("none", V1, V1, False),
        ("backward", V2, V1, True),
        ("backward", V1, V2, False),
        ("full", V2, V1, True),
        ("full", V1, V2, False),
        ("forward", V2, V1, False),
        ("forward", V1, V2, True),
    ],
)
def test_which_schema_starts_new_files(mode, schema, current, expected):
    assert changes_schema(mode, schema, current) is expected


def test_versions_are_required_except_for_none():
    unversioned = Schema("struct", name="Ev", fields=V1.fields)
    assert changes_schema("none", unversioned, V1)
    with pytest.raises(ProjectionError, match="version is required for BACKWARD"):
        changes_schema("backward", unversioned, V1)


def test_projection_widens_fills_defaults_and_drops_fields():
    assert project({"id": 5}, V1, V2) == {"id": 5, "note": "none", "score": None}
    narrow = Schema("struct", name="Ev", version=1, fields=(Field("id", Schema("int64")),))
    assert project({"id": 5, "note": "x", "score": 1.5}, V2, narrow) == {"id": 5}
    assert project(3, Schema("int32"), Schema("float64")) == 3.0


@pytest.mark.parametrize(
    "value, source, target, message",
    [
        ({"id": 5}, V1, V3_REQUIRED, "must: required field is missing"),
        (
            {"id": 5, "note": "x", "score": None},
            V2,
            Schema("struct", name="Ev", version=9, fields=(Field("id", Schema("int32")),)),
            "id: int64 cannot be projected to int32",
        ),
        ({"id": 5}, V1, Schema("struct", name="Other", version=2, fields=V1.fields), "schema name"),
    ],
)
def test_impossible_projections_name_the_field(value, source, target, message):
    with pytest.raises(ProjectionError, match=message):
        project(value, source, target)


def column(*schemas) -> ValueColumn:
    items = [{"id": i} if s is V1 else {"id": i, "note": "n", "score": 0.5} for i, s in enumerate(schemas)]
    return ValueColumn("struct", items, items, list(schemas))


def test_backward_projects_older_records_up_and_stops_at_a_newer_one():
    gate = SchemaGate("backward", "t", 0)
    values = column(V2, V1, V2, V1)
    end, admitted = gate.admit([10, 11, 12, 13], values, P, 0, 4, has_open=False)
    assert end == 4 and admitted.schemas == [V2] * 4
    assert admitted.items[1] == {"id": 1, "note": "none", "score": None}
    gate.reset()
    end, admitted = gate.admit([10, 11, 12, 13], column(V1, V1, V2, V1), P, 0, 4, has_open=False)
    assert end == 2  # the newer V2 record closes the files holding V1 records


def test_none_rotates_on_any_change_but_not_before_the_first_record():
    gate = SchemaGate("none", "t", 0)
    end, _ = gate.admit([0, 1], column(V2, V1), P, 0, 2, has_open=False)
    assert end == 1
    gate.reset()
    end, admitted = gate.admit([1], column(V1), P, 0, 1, has_open=False)
    assert end == 1 and admitted.schemas == [V1]


def test_projection_failure_is_a_record_error_with_the_offset():
    gate = SchemaGate("forward", "t", 3)
    v3 = {"id": 1, "must": "x"}
    values = ValueColumn("struct", [{"id": 0}, v3], None, [V1, V3_REQUIRED])
    gate.admit([40, 41], values, P, 0, 1, has_open=False)
    with pytest.raises(RecordError) as caught:
        gate.admit([40, 41], values, P, 1, 2, has_open=True)
    assert caught.value.offset == 41 and "FORWARD" in str(caught.value)
