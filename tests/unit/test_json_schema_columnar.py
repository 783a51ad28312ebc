"""Registry JSON Schema values read columnarly (convert/json_schema_arrow.py) write the same bytes as the general path
and meet the same errors, named by the same offsets."""

from __future__ import annotations

import json
import random

import orjson
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from sink_engine.convert.arrow_column import ArrowStructColumn
from sink_engine.convert.confluent_json_schema_converter import ConfluentJsonSchemaConverter
from sink_engine.convert.confluent_registry import SubjectNames
from sink_engine.errors import RecordError
from sink_engine.format.parquet_format import ParquetFormat
from tests.columnar import FORMAT_IDS, FORMATS, assert_runs_encode_alike, assert_same_output, chunk_of, encoded
from tests.schema_registry_server import SchemaRegistryServer

TIMESTAMP = {"type": "integer", "title": "org.apache.kafka.connect.data.Timestamp", "connect.type": "int64"}
DATE = {"type": "integer", "title": "org.apache.kafka.connect.data.Date", "connect.type": "int32"}
MIXED = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Mixed",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "kind": {"type": "string", "enum": ["click", "view", "purchase"]},
        "at": TIMESTAMP,
        "day": {"oneOf": [{"type": "null"}, DATE]},
        "small": {"type": "integer", "connect.type": "int8"},
        "mid": {"type": "integer", "connect.type": "int16"},
        "i32": {"type": "integer", "connect.type": "int32"},
        "price": {"oneOf": [{"type": "null"}, {"type": "number"}]},
        "ratio": {"type": "number", "connect.type": "float32"},
        "ok": {"type": "boolean"},
        "note": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "maybe_tags": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "string"}}]},
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        "device": {
            "type": "object",
            "title": "Device",
            "properties": {
                "os": {"type": "string"},
                "version": {"type": "integer", "connect.type": "int32"},
                "seen": TIMESTAMP,
                "owner": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
            "required": ["os", "version"],
        },
        "owner": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "title": "Owner",
                    "properties": {
                        "name": {"type": "string"},
                        "since": DATE,
                        "scores": {"type": "array", "items": {"type": "number"}},
                    },
                    "required": ["name", "since"],
                },
            ]
        },
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku", "qty"],
            },
        },
        "channel": {"type": "string", "default": "web"},
        "count": {"type": "integer", "default": 7},
    },
    "required": ["id", "kind", "at", "ok", "tags", "device", "channel"],
}
# a second schema id of the same subject: a field fewer, one more
MIXED_V2 = {
    **MIXED,
    "properties": {**{k: v for k, v in MIXED["properties"].items() if k != "ratio"}, "n": {"type": "integer"}},
}
KINDS = ("click", "view", "purchase")


def mixed(i: int, large: bool = False) -> dict:
    """Nulls, missing optional fields, unicode, boundaries of each integer type, extra fields."""
    value = {
        "id": i * 7_919 - 2**62 * (i % 2),
        "kind": KINDS[i % 3],
        "at": 1_700_000_000_000 + i * 1_001 - 2**40 * (i % 2),
        "day": None if i % 5 == 0 else 19_000 - 400 * i,
        "small": (-128, 127, 0)[i % 3],
        "mid": (-32_768, 32_767)[i % 2],
        "i32": (-(2**31), 2**31 - 1, i)[i % 3],
        "price": None if i % 4 == 0 else (i * 0.25, i, 1e300, -0.0)[i % 4],
        "ratio": 1 / (i + 1),
        "ok": i % 2 == 0,
        "note": None if i % 3 else 'ünï-ⓒ-😀 "quoted" \\ /\t\n',
        "tags": ["x" * (200_000 if large else 3), "ünï-ⓒ-😀", ""][: i % 4],
        "maybe_tags": None if i % 3 == 0 else ["", f"t{i}"][: i % 3],
        "grid": [[i / 3] * (i % 3), [-i, 1e-300, 2**64 - 1]][: i % 3],
        "device": {
            "os": ("ios", "android", "")[i % 3],
            "version": -i,
            "seen": i * 60_000,
            "owner": None if i % 2 else {"name": "名前" * (i % 4)},
            "extra": {"deep": [1, {"x": None}]},
        },
        "owner": None if i % 2 else {"name": "owner", "since": -i, "scores": [0.1 * i, 2.0, -3]},
        "lines": [{"sku": f"s{j}", "qty": j - 2} for j in range(i % 4)],
        "channel": ("app", None)[i % 2],
        "n": i,
        "unknown": "ignored",
    }
    if i % 6 == 1:
        del value["note"], value["maybe_tags"], value["channel"]
    elif i % 6 == 2:
        value["count"] = -i
    return value


def payload(value: dict, i: int = 0) -> bytes:
    """Compact UTF-8 JSON, or every other time ASCII JSON with escapes and spaces (as Python's json writes it)."""
    return json.dumps(value).encode() if i % 2 else orjson.dumps(value)


@pytest.fixture(scope="module")
def ids():
    with SchemaRegistryServer() as registry:
        client = SchemaRegistryClient({"url": registry.url})
        register = lambda name, schema: client.register_schema(name, Schema(json.dumps(schema), "JSON"))  # noqa: E731
        yield (
            client,
            {
                "v1": register("t-value", MIXED),
                "v2": register("t-value", MIXED_V2),
                **{name: register(f"{name}-value", schema) for name, schema in UNCOVERED.items()},
            },
        )


def converters(client, validate: bool = False) -> tuple:
    """(columnar, general): the same converter with and without the columnar reader."""
    general = ConfluentJsonSchemaConverter(client, SubjectNames("t"), validate)
    fetch = general.fetch
    general.fetch = lambda schema_id: _without_reader(fetch(schema_id))
    return ConfluentJsonSchemaConverter(client, SubjectNames("t"), validate), general


def _without_reader(decoder):
    decoder.arrow = None
    return decoder


def value_of(schema_id: int, text: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + text


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
@pytest.mark.parametrize("large", [False, True], ids=["small", "large-values"])
def test_columnar_values_encode_to_the_same_bytes_as_the_general_path(ids, fmt, large):
    # given mixed values of one schema id (nulls, defaults, logical types, nested objects, arrays, unicode, escapes)
    client, schema_ids = ids
    columnar, general = converters(client)
    chunk = chunk_of([value_of(schema_ids["v1"], payload(mixed(i, large and i == 7), i)) for i in range(40)])
    # when both convert them
    fast, slow = columnar.convert(chunk), general.convert(chunk)
    # then the columnar column came from Arrow, and every format writes the same bytes from both
    assert_same_output(fmt, fast, slow)


def test_several_schema_ids_in_one_batch_give_one_table_per_schema_and_the_same_files(ids):
    # given a chunk alternating runs of two schema ids
    client, schema_ids = ids
    columnar, general = converters(client)
    values = [value_of(schema_ids["v2" if (i // 5) % 2 else "v1"], payload(mixed(i), i)) for i in range(30)]
    fast, slow = columnar.convert(chunk_of(values)), general.convert(chunk_of(values))
    # when each run of one schema is encoded (as the schema gate cuts files), then the bytes match
    assert_runs_encode_alike(fast, slow, 5)
    assert fast.schemas == slow.schemas


def _set(path: str, replacement):
    """A function giving mixed(4)'s JSON with the field at `path` (dotted) set to `replacement`'s JSON text."""

    def text() -> bytes:
        marker = "@@replaced@@"
        value, parents = mixed(4), path.split(".")[:-1]
        target = value
        for name in parents:
            target = target[name]
        target[path.split(".")[-1]] = marker
        return orjson.dumps(value).replace(orjson.dumps(marker), replacement)

    return text


def _without(path: str):
    def text() -> bytes:
        value = mixed(4)
        *parents, last = path.split(".")
        target = value
        for name in parents:
            target = target[name]
        del target[last]
        return orjson.dumps(value)

    return text


GOOD = orjson.dumps(mixed(4))
# a payload at offset 105 that one of the two readers might take otherwise than the other
CASES = {
    "int-with-fraction": _set("id", b"1.0"),
    "int-with-exponent": _set("id", b"1e2"),
    "int-as-string": _set("id", b'"1"'),
    "int-as-boolean": _set("id", b"true"),
    "int64-overflow": _set("id", b"9223372036854775808"),
    "int-past-64-bits": _set("id", b"123456789012345678901234567890"),
    "int8-overflow": _set("small", b"128"),
    "int16-underflow": _set("mid", b"-32769"),
    "int32-overflow": _set("i32", b"2147483648"),
    "number-as-string": _set("price", b'"1.5"'),
    "number-as-boolean": _set("price", b"false"),
    "number-NaN": _set("price", b"NaN"),
    "number-Infinity": _set("price", b"-Infinity"),
    "number-too-big": _set("price", b"1e400"),
    "number-integer-minus-zero": _set("price", b"-0"),
    "number-minus-zero": _set("price", b"-0.0"),
    "number-big-integer": _set("price", b"18446744073709551617"),
    "number-subnormal": _set("price", b"4.9e-324"),
    "float32-overflow": _set("ratio", b"1e39"),
    "float32-rounding": _set("ratio", b"0.1000000000000000055511151231257827"),
    "string-as-number": _set("kind", b"3"),
    "string-as-object": _set("kind", b"{}"),
    "boolean-as-int": _set("ok", b"1"),
    "required-null": _set("id", b"null"),
    "required-missing": _without("kind"),
    "required-nested-null": _set("device.os", b"null"),
    "required-nested-missing": _without("device.version"),
    "required-null-under-a-null-parent": _set("owner", b"null"),
    "required-struct-null": _set("device", b"null"),
    "struct-as-array": _set("device", b"[]"),
    "array-as-object": _set("tags", b"{}"),
    "null-array-item": _set("tags", b'["a", null]'),
    "null-in-nested-array": _set("grid", b"[[1.0, null]]"),
    "required-in-array-item-missing": _set("lines", b'[{"sku":"a"}]'),
    "default-null": _set("channel", b"null"),
    "default-missing": _without("channel"),
    "timestamp-past-9999": _set("at", b"253402300800000"),
    "timestamp-far-past": _set("at", b"-100000000000000000"),
    "timestamp-last-ms": _set("at", b"253402300799999"),
    "date-before-year-1": _set("owner.since", b"-719163"),
    "date-first-day": _set("owner.since", b"-719162"),
    "date-past-int32": _set("day", b"2147483648"),
    "duplicate-key": lambda: GOOD[:-1] + b',"kind":"view"}',
    "duplicate-key-in-extra": lambda: GOOD[:-1] + b',"u":{"a":1,"a":2}}',
    "escaped-key": lambda: GOOD.replace(b'"kind"', b'"\\u006bind"'),
    "surrogate-pair": _set("note", b'"\\ud83d\\ude00"'),
    "lone-surrogate": _set("note", b'"\\ud800"'),
    "raw-control-character": _set("note", b'"a\x01b"'),
    "invalid-utf8-in-extra": lambda: GOOD[:-1] + b',"u":"\xff"}',
    "utf8-surrogate-in-extra": lambda: GOOD[:-1] + b',"u":"\xed\xa0\x80"}',
    "deep-extra": lambda: GOOD[:-1] + b',"u":' + b"[" * 1100 + b"]" * 1100 + b"}",
    "huge-integer-in-extra": lambda: GOOD[:-1] + b',"u":' + b"9" * 400 + b"}",
    "two-objects": lambda: GOOD + GOOD,
    "trailing-comma": lambda: GOOD[:-1] + b",}",
    "empty": lambda: b"",
    "blank": lambda: b"  ",
    "leading-space": lambda: b" " + GOOD,
    "trailing-space": lambda: GOOD + b" \t",
    "pretty-printed": lambda: json.dumps(mixed(4), indent=2).encode(),
    "carriage-return": lambda: GOOD + b"\r",
    "byte-order-mark": lambda: b"\xef\xbb\xbf" + GOOD,
    "null-value": lambda: b"null",
    "array-value": lambda: b"[]",
    "not-json": lambda: b"{nope",
}
COLUMNAR = {
    "trailing-space",
    "number-minus-zero",
    "number-big-integer",
    "number-subnormal",
    "float32-overflow",
    "float32-rounding",
    "required-null-under-a-null-parent",
    "default-null",
    "default-missing",
    "timestamp-last-ms",
    "date-first-day",
    "duplicate-key-in-extra",
    "escaped-key",
    "surrogate-pair",
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_payload_either_reader_might_take_otherwise_gives_the_general_paths_outcome(ids, case):
    # given that payload at offset 105 among good ones
    client, schema_ids = ids
    columnar, general = converters(client)
    values = [value_of(schema_ids["v1"], payload(mixed(i))) for i in range(12)]
    values[5] = value_of(schema_ids["v1"], CASES[case]())
    chunk = chunk_of(values)
    # when converted, then the columnar converter gives the general path's error (offset and cause), or its bytes
    try:
        expected = general.convert(chunk)
    except RecordError as e:
        with pytest.raises(RecordError) as raised:
            columnar.convert(chunk)
        assert (raised.value.offset, raised.value.cause) == (e.offset, e.cause) and e.offset == 105
        assert case not in COLUMNAR
        return
    got = columnar.convert(chunk)
    assert encoded(ParquetFormat(), got) == encoded(ParquetFormat(), expected) and got.items == expected.items
    assert isinstance(got, ArrowStructColumn) == (case in COLUMNAR)


def test_random_corruptions_give_the_general_paths_outcome(ids):
    # given payloads with a few bytes replaced, inserted or dropped at random (a fixed seed)
    client, schema_ids = ids
    columnar, general = converters(client)
    rng, taken = random.Random(22), 0
    alphabet = b'{}[]",:.-+eE0123456789 \\untrlfasx\xff\xc3\xa9\n'
    for attempt in range(300):
        text = bytearray(payload(mixed(attempt % 12), attempt))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            action = rng.randrange(3)
            if action == 0:
                text[at] = rng.choice(alphabet)
            elif action == 1:
                text.insert(at, rng.choice(alphabet))
            else:
                del text[at]
        chunk = chunk_of([value_of(schema_ids["v1"], payload(mixed(0))), value_of(schema_ids["v1"], bytes(text))])
        # when both convert them, then they agree: the same error at the same offset, or the same file
        try:
            expected = encoded(ParquetFormat(), general.convert(chunk))
        except RecordError as e:
            with pytest.raises(RecordError) as raised:
                columnar.convert(chunk)
            assert (raised.value.offset, raised.value.cause) == (e.offset, e.cause), bytes(text)
            continue
        got = columnar.convert(chunk)
        taken += isinstance(got, ArrowStructColumn)
        assert encoded(ParquetFormat(), got) == expected, bytes(text)
    assert taken > 10  # corruptions inside strings and numbers that stay valid are read columnarly


UNCOVERED = {
    "map": {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}},
    "one-of": {"type": "object", "properties": {"p": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}},
    "bytes": {"type": "object", "properties": {"b": {"type": "string", "connect.type": "bytes"}}},
    "decimal": {
        "type": "object",
        "properties": {
            "d": {
                "type": "number",
                "title": "org.apache.kafka.connect.data.Decimal",
                "connect.parameters": {"scale": "2"},
            }
        },
    },
    "date-time": {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}}},
    "time": {
        "type": "object",
        "properties": {
            "t": {"type": "integer", "title": "org.apache.kafka.connect.data.Time", "connect.type": "int32"}
        },
    },
    "nested-default": {
        "type": "object",
        "properties": {"o": {"type": "object", "properties": {"s": {"type": "string", "default": "x"}}}},
    },
    "object-default": {
        "type": "object",
        "properties": {"o": {"type": "object", "properties": {"s": {"type": "string"}}, "default": {"s": "x"}}},
    },
    "array-default": {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}, "default": [1]}},
    },
}
UNCOVERED_VALUES = {
    "map": {"m": {"a": 1}},
    "one-of": {"p": 3},
    "bytes": {"b": "AAE="},
    "decimal": {"d": 1.25},
    "date-time": {"t": "2024-01-15T10:00:00Z"},
    "time": {"t": 1000},
    "nested-default": {"o": {}},
    "object-default": {},
    "array-default": {},
}


@pytest.mark.parametrize("name", list(UNCOVERED))
def test_schemas_the_reader_does_not_cover_take_the_general_path(ids, name):
    # given values of a schema the columnar reader does not take
    client, schema_ids = ids
    columnar, general = converters(client)
    chunk = chunk_of([value_of(schema_ids[name], orjson.dumps(UNCOVERED_VALUES[name]))] * 3)
    # when converted, then the values come from the general path
    column = columnar.convert(chunk)
    assert not isinstance(column, ArrowStructColumn) and column.items == general.convert(chunk).items


def test_values_validated_by_json_fail_invalid_schema_are_still_read_columnarly(ids):
    # given json.fail.invalid.schema, and a value outside the schema's enum at offset 103
    client, schema_ids = ids
    columnar, general = converters(client, validate=True)
    values = [value_of(schema_ids["v1"], payload(mixed(2 * i))) for i in range(6)]  # odd i: nulls the schema refuses
    # when the valid values are converted, then they are read columnarly, the same as the general path
    fast = columnar.convert(chunk_of(values))
    assert isinstance(fast, ArrowStructColumn)
    assert encoded(ParquetFormat(), fast) == encoded(ParquetFormat(), general.convert(chunk_of(values)))
    # and the invalid one is named by its offset
    values[3] = value_of(schema_ids["v1"], orjson.dumps({**mixed(6), "kind": "lost"}))
    with pytest.raises(RecordError, match="does not validate") as raised:
        columnar.convert(chunk_of(values))
    assert raised.value.offset == 103


def test_a_selection_of_a_columnar_column_builds_from_its_values(ids):
    # given a columnar column, when records are picked out of order (a field partitioner's groups)
    client, schema_ids = ids
    columnar, general = converters(client)
    chunk = chunk_of([value_of(schema_ids["v1"], payload(mixed(i), i)) for i in range(10)])
    fast, slow = columnar.convert(chunk).select([7, 2, 3]), general.convert(chunk).select([7, 2, 3])
    # then it encodes the same bytes as the general path
    assert encoded(ParquetFormat(), fast) == encoded(ParquetFormat(), slow)


@pytest.mark.parametrize(
    "value, message",
    [
        (b"\x01" + bytes(16) + b"{}", "schema GUIDs .magic byte 1. are not supported"),
        (b"\x00\x00\x01", "not in the Schema Registry wire format"),
        (b'{"id": 1}', "not in the Schema Registry wire format"),
    ],
)
def test_a_value_not_in_the_wire_format_is_named_by_its_offset(ids, value, message):
    client, schema_ids = ids
    columnar, _ = converters(client)
    values = [value_of(schema_ids["v1"], payload(mixed(0))), value]
    with pytest.raises(RecordError, match=f"t-0@101: JsonSchemaConverter: {message}"):
        columnar.convert(chunk_of(values))
