"""ExtractNewRecordState reproduces Debezium's ExtractNewRecordStateTest on the same envelopes (its
AbstractExtractStateTest records): creates, updates, deletes, tombstones and truncates per
delete.tombstone.handling.mode, add.fields / add.headers with prefixes and new names, route.by.field."""

from __future__ import annotations

import pytest

from sink_engine.convert.schema import Field, Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.extract_new_record_state import ExtractNewRecordState
from sink_engine.transform.record import Header
from tests.unit.transform.more_records import options, record

STRING, OPTIONAL_STRING = Schema("string"), Schema("string", True)
OPTIONAL_INT64 = Schema("int64", True)
ID = Schema("int8", parameters=(("__debezium.source.column.name", "id"), ("__debezium.source.column.type", "int")))
ROW = Schema("struct", True, name="dummy.Value", fields=(Field("id", ID), Field("name", STRING)))
ROW_WITH_DEFAULT = Schema(
    "struct",
    True,
    name="dummy.Value",
    fields=(Field("id", Schema("int8")), Field("name", Schema("string", True, "default_str"))),
)
SOURCE = Schema(
    "struct",
    name="source",
    fields=(
        Field("lsn", Schema("int32")),
        Field("ts_ms", OPTIONAL_INT64),
        Field("ts_us", OPTIONAL_INT64),
        Field("ts_ns", OPTIONAL_INT64),
        Field("db", OPTIONAL_STRING),
        Field("table", OPTIONAL_STRING),
    ),
)
DELETE_SOURCE = Schema(
    "struct",
    name="source",
    fields=(
        Field("lsn", Schema("int32")),
        Field("version", STRING),
        Field("db", OPTIONAL_STRING),
        Field("table", OPTIONAL_STRING),
    ),
)
TRANSACTION = Schema(
    "struct",
    True,
    name="event.block",
    version=1,
    fields=(
        Field("id", STRING),
        Field("total_order", Schema("int64")),
        Field("data_collection_order", Schema("int64")),
    ),
)
SOURCE_VALUES = {
    "lsn": 1234,
    "ts_ms": 1588252618953,
    "ts_us": 1588252618953000,
    "ts_ns": 1588252618953000000,
    "db": "test_db",
    "table": "test_table",
}
TS = {"ts_ms": 1710032523000, "ts_us": 1710032523000123, "ts_ns": 1710032523000123456}


def envelope_schema(row=ROW, source=SOURCE, extra=()):
    return Schema(
        "struct",
        name="dummy.Envelope",
        fields=(
            Field("before", row),
            Field("after", row),
            Field("source", source),
            Field("transaction", TRANSACTION),
            Field("op", STRING),
            Field("ts_ms", OPTIONAL_INT64),
            Field("ts_us", OPTIONAL_INT64),
            Field("ts_ns", OPTIONAL_INT64),
        )
        + tuple(extra),
    )


def event(op, before=None, after=None, source=None, transaction=None, schema=None, **extra):
    value = {
        "before": before,
        "after": after,
        "source": source or SOURCE_VALUES,
        "transaction": transaction,
        "op": op,
        **TS,
        **extra,
    }
    return record(key=None, value=value, value_schema=schema or envelope_schema(), topic="dummy")


def create():
    return event("c", after={"id": 1, "name": "myRecord"})


def update():
    return event(
        "u",
        before={"id": 1, "name": "myRecord"},
        after={"id": 1, "name": "updatedRecord"},
        transaction={"id": "571", "total_order": 42, "data_collection_order": 42},
    )


def delete():
    return event(
        "d",
        before={"id": 1, "name": "myRecord"},
        source={"lsn": 1234, "version": "version!", "db": "test_db", "table": "test_table"},
        schema=envelope_schema(source=DELETE_SOURCE),
    )


def tombstone():
    return record(key=None, value=None, topic="dummy")


def truncate():
    return event("t")


def unwrap(**values):
    return ExtractNewRecordState.from_options(options(**values))


def header(transformed, name):
    found = [h.value for h in transformed.headers if h.name == name]
    return found[0] if found else None


@pytest.mark.parametrize(
    "mode, kept",
    [
        ("drop", False),
        ("tombstone", False),
        ("rewrite", False),
        ("rewrite-with-tombstone", True),
        ("delete-to-tombstone", False),
    ],
)
def test_debeziums_tombstones_per_mode(mode, kept):
    given = tombstone()
    assert unwrap(delete_tombstone_handling_mode=mode).apply(given) == (given if kept else None)


@pytest.mark.parametrize("mode", ["tombstone", None])
def test_truncate_is_dropped_and_tombstone_is_the_default_mode(mode):
    transform = unwrap(delete_tombstone_handling_mode=mode)
    assert transform.apply(truncate()) is None
    assert transform.apply(tombstone()) is None
    assert transform.apply(delete()).value is None


@pytest.mark.parametrize(
    "mode, value, schema",
    [
        ("drop", None, None),
        ("tombstone", None, ROW),  # a null value with the after schema, as Debezium's ExtractField gives it
        ("delete-to-tombstone", None, None),
    ],
)
def test_deletes_per_mode(mode, value, schema):
    transformed = unwrap(delete_tombstone_handling_mode=mode).apply(delete())
    if mode == "drop":
        assert transformed is None
    else:
        assert (transformed.value, transformed.value_schema) == (value, schema)


def test_delete_rewrite_is_the_before_state_with_deleted_true():
    transformed = unwrap(delete_tombstone_handling_mode="rewrite").apply(delete())
    assert transformed.value == {"id": 1, "name": "myRecord", "__deleted": "true"}
    assert transformed.value_schema == Schema(
        "struct", name="dummy.Value", fields=ROW.fields + (Field("__deleted", OPTIONAL_STRING),)
    )


def test_create_rewrite_adds_deleted_false_and_the_op_header():
    transformed = unwrap(delete_tombstone_handling_mode="rewrite", add_headers="op").apply(create())
    assert transformed.value["__deleted"] == "false"
    assert transformed.headers == (Header("__op", "c", Schema("string", True)),)


def test_unwrap_create_record():
    transformed = unwrap(delete_tombstone_handling_mode="tombstone").apply(create())
    assert (transformed.value, transformed.value_schema, transformed.topic) == (
        {"id": 1, "name": "myRecord"},
        ROW,
        "dummy",
    )


@pytest.mark.parametrize(
    "values, name",
    [
        ({"delete_tombstone_handling_mode": "tombstone"}, None),
        ({"delete_tombstone_handling_mode": "rewrite", "replace_null_with_default": "false"}, None),
        ({"delete_tombstone_handling_mode": "rewrite"}, "default_str"),
    ],
)
def test_a_null_with_a_default_is_replaced_only_when_rewriting(values, name):
    given = event("c", after={"id": 1, "name": None}, schema=envelope_schema(ROW_WITH_DEFAULT))
    assert unwrap(**values).apply(given).value["name"] == name


def test_records_that_are_not_envelopes_pass_unchanged():
    transform = unwrap(delete_tombstone_handling_mode="tombstone", add_headers="op,source.lsn")
    for schema in (
        Schema("struct", name="unknown", fields=(Field("id", Schema("int8")),)),
        Schema("struct", fields=(Field("id", Schema("int8")),)),
        Schema("struct", name="io.debezium.connector.common.Heartbeat", fields=(Field("ts_ms", Schema("int64")),)),
    ):
        given = record(value={"id": 1}, value_schema=schema)
        assert transform.apply(given) is given


def test_schemaless_envelopes_pass_unchanged_as_in_debezium():
    given = record(value={"before": None, "after": {"id": 1}, "op": "c"})
    assert unwrap(delete_tombstone_handling_mode="rewrite").apply(given) is given


def test_the_records_headers_are_kept():
    given = create().with_changes(headers=(Header("application/debezium-test-header", b"keep"),))
    assert unwrap().apply(given).headers == (Header("application/debezium-test-header", b"keep"),)


def test_add_field_op_and_a_schema_per_input_schema():
    transform = unwrap(add_fields="op")
    assert transform.apply(create()).value["__op"] == "c"
    wider = Schema(
        "struct", True, fields=(Field("id", Schema("int8")), Field("name", STRING), Field("started_at", OPTIONAL_INT64))
    )
    for started in (1694587158123, 1694587158789):
        given = event("c", after={"id": 1, "name": "myRecord", "started_at": started}, schema=envelope_schema(wider))
        transformed = transform.apply(given)
        assert transformed.value == {"id": 1, "name": "myRecord", "started_at": started, "__op": "c"}
        assert [f.name for f in transformed.value_schema.fields] == ["id", "name", "started_at", "__op"]


@pytest.mark.parametrize(
    "fields, expected",
    [
        ("ts_ms", {"__ts_ms": 1710032523000}),
        ("source.ts_ms", {"__source_ts_ms": 1588252618953}),
        (
            "source.table:META_SRC_TABLENAME,source.ts_us:META_SRC_TS_US,source.ts_ns:META_SRC_TS_NS,ts_us:META_TS_US,"
            "ts_ns:META_TS_NS,op:META_SRC_OP,source.scn:META_SRC_SCN",
            {
                "__META_SRC_TABLENAME": "test_table",
                "__META_SRC_TS_US": 1588252618953000,
                "__META_SRC_TS_NS": 1588252618953000000,
                "__META_TS_US": 1710032523000123,
                "__META_TS_NS": 1710032523000123456,
                "__META_SRC_OP": "c",
            },
        ),  # source.scn is in neither: skipped
    ],
)
def test_add_timestamp_and_renamed_fields(fields, expected):
    transformed = unwrap(add_fields=fields).apply(create())
    assert transformed.value == {"id": 1, "name": "myRecord", **expected}


def test_add_fields_with_a_prefix_and_the_default_struct_of_each():
    transformed = unwrap(add_fields="op , lsn,id", add_fields_prefix="prefix.").apply(update())
    assert transformed.value == {
        "id": 1,
        "name": "updatedRecord",
        "prefix.op": "u",
        "prefix.lsn": 1234,
        "prefix.id": "571",
    }
    schemas = {f.name: f.schema for f in transformed.value_schema.fields}
    assert schemas["prefix.lsn"] == Schema("int32", True) and schemas["prefix.id"] == OPTIONAL_STRING


def test_new_field_and_header_names():
    transformed = unwrap(
        add_fields="op:OP, lsn:LSN, id:ID, source.lsn:source_lsn, transaction.total_order:TOTAL_ORDER",
        add_fields_prefix="",
        add_headers="op, source.lsn:source_lsn, transaction.id:TXN_ID, transaction.total_order:TOTAL_ORDER",
        add_headers_prefix="prefix.",
    ).apply(update())
    assert transformed.value == {
        "id": 1,
        "name": "updatedRecord",
        "OP": "u",
        "LSN": 1234,
        "ID": "571",
        "source_lsn": 1234,
        "TOTAL_ORDER": 42,
    }
    assert [(h.name, h.value) for h in transformed.headers] == [
        ("prefix.op", "u"),
        ("prefix.source_lsn", 1234),
        ("prefix.TXN_ID", "571"),
        ("prefix.TOTAL_ORDER", 42),
    ]


def test_fields_of_a_missing_optional_struct_are_null():
    transform = unwrap(add_fields="op,lsn,id", add_headers="op,lsn,id")
    transformed = transform.apply(create())
    assert transformed.value == {"id": 1, "name": "myRecord", "__op": "c", "__lsn": 1234, "__id": None}
    assert [(h.name, h.value) for h in transformed.headers] == [("__op", "c"), ("__lsn", 1234), ("__id", None)]


def test_add_fields_and_headers_naming_their_struct():
    transformed = unwrap(
        add_fields="op,source.lsn,transaction.id,transaction.total_order",
        add_headers="op,source.lsn,transaction.id,transaction.total_order",
        add_headers_prefix="prefix.",
    ).apply(update())
    assert transformed.value == {
        "id": 1,
        "name": "updatedRecord",
        "__op": "u",
        "__source_lsn": 1234,
        "__transaction_id": "571",
        "__transaction_total_order": 42,
    }
    assert [(h.name, h.value) for h in transformed.headers] == [
        ("prefix.op", "u"),
        ("prefix.source_lsn", 1234),
        ("prefix.transaction_id", "571"),
        ("prefix.transaction_total_order", 42),
    ]


@pytest.mark.parametrize("given, topic", [(create, "myRecord"), (update, "updatedRecord"), (delete, "myRecord")])
def test_route_by_field(given, topic):
    assert unwrap(delete_tombstone_handling_mode="tombstone", route_by_field="name").apply(given()).topic == topic


def test_rewrite_with_tombstone_adds_headers_to_the_delete_and_an_op_header_to_the_tombstone():
    transform = unwrap(delete_tombstone_handling_mode="rewrite-with-tombstone", add_headers="op,source.lsn")
    transformed = transform.apply(delete())
    assert transformed.value["__deleted"] == "true"
    assert (header(transformed, "__op"), header(transformed, "__source_lsn")) == ("d", 1234)
    kept = transform.apply(tombstone())
    assert kept.value is None and kept.headers == (Header("__op", "d", STRING),)


@pytest.mark.parametrize("mode", ["rewrite", "rewrite-with-tombstone"])
def test_add_fields_to_a_rewritten_delete(mode):
    transformed = unwrap(delete_tombstone_handling_mode=mode, add_fields="op,lsn,source.lsn").apply(delete())
    assert transformed.value == {
        "id": 1,
        "name": "myRecord",
        "__deleted": "true",
        "__op": "d",
        "__lsn": 1234,
        "__source_lsn": 1234,
    }


def test_a_field_in_no_struct_is_skipped_and_a_top_level_one_is_found():
    changes = Field("changes", Schema("array", items=STRING))
    given = event(
        "u",
        before={"id": 1, "name": "myRecord"},
        after={"id": 1, "name": "updatedRecord"},
        transaction={"id": "571", "total_order": 42, "data_collection_order": 42},
        schema=envelope_schema(extra=(changes,)),
        changes=["name"],
    )
    transformed = unwrap(add_fields="notExisting,op:OP,changes:META_SRC_CHANGED", add_fields_prefix="").apply(given)
    assert transformed.value == {"id": 1, "name": "updatedRecord", "OP": "u", "META_SRC_CHANGED": ["name"]}
    assert transformed.value_schema.field("notExisting") is None
    assert transformed.value_schema.field("META_SRC_CHANGED").schema == Schema("array", True, items=STRING)


@pytest.mark.parametrize(
    "values, key",
    [
        ({"delete_tombstone_handling_mode": "jbsdfkjsd"}, "delete.tombstone.handling.mode"),
        ({"delete_handling_mode": "keep"}, "delete.handling.mode"),
        ({"add_fields": "a:b:c"}, "add.fields"),
        ({"drop_fields_header_name": "drop-fields"}, "drop.fields.header.name"),
    ],
)
def test_bad_options_name_their_key(values, key):
    with pytest.raises(ConfigError) as caught:
        unwrap(**values)
    assert caught.value.key == f"transforms.t.{key}"


@pytest.mark.parametrize(
    "values, tombstone_kept, delete_value",
    [
        ({"drop_tombstones": "true"}, False, None),  # delete.handling.mode drop: the delete is dropped
        ({"drop_tombstones": "false", "delete_handling_mode": "none"}, True, "null"),
        ({"delete_handling_mode": "rewrite"}, False, "true"),
        ({"drop_tombstones": "false", "delete_handling_mode": "rewrite"}, True, "true"),
    ],
)
def test_debezium_1_and_2_keys_when_the_new_mode_is_unset(values, tombstone_kept, delete_value):
    transform = unwrap(**values)
    assert (transform.apply(tombstone()) is not None) == tombstone_kept
    transformed = transform.apply(delete())
    if delete_value is None:
        assert transformed is None
    elif delete_value == "null":
        assert transformed.value is None
    else:
        assert transformed.value["__deleted"] == delete_value


def test_a_row_that_already_has_deleted_is_a_bad_record_as_schemabuilder_refuses_the_duplicate():
    row = Schema("struct", True, fields=(Field("id", Schema("int8")), Field("__deleted", OPTIONAL_STRING)))
    with pytest.raises(TransformError, match="__deleted"):
        unwrap(delete_tombstone_handling_mode="rewrite").apply(
            event("c", after={"id": 1, "__deleted": None}, schema=envelope_schema(row))
        )
