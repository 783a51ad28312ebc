"""Hypothesis strategies of records as a topic holds them (tests/connect_transforms_oracle.py's WireRecord), for the
differential transform test: JsonConverter envelopes of structs (every Connect type, logical types, optional
fields, defaults, nested structs, arrays, maps, nulls), schemaless JSON (nested maps, lists, nulls), primitives with
and without a schema, tombstones, keys of each shape, headers; and Debezium change events (`change_events`).
Field names come from one small pool (FIELDS, NESTED) that the option strategies draw from too, so that options
name fields that are there, and some that are not."""

from __future__ import annotations

import base64
import datetime

import orjson
from hypothesis import strategies as st

from tests.connect_transforms_oracle import WirePart, WireRecord

FIELDS = ("id", "name", "amount", "ts", "flag", "note", "nested")
NESTED = ("x", "y", "ts")
TOPICS = ("orders", "db.public.users", "t-1")
HEADER_NAMES = ("h1", "h2", "op")
TIME_FORMATS = {
    "yyyy-MM-dd HH:mm:ss": "%Y-%m-%d %H:%M:%S",
    "yyyy-MM-dd": "%Y-%m-%d",
    "dd/MM/yy HH:mm": "%d/%m/%y %H:%M",
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MILLIS = st.integers(-2_000_000_000_000, 4_000_000_000_000)
_TEXTS = st.sampled_from(["", "12", "-7", "300", "true", "False", "1.5", "abc", "2024-01-02 03:04:05"]) | st.text(
    "ab1.-", max_size=4
)


def _unscaled(number: int) -> str:
    return base64.b64encode(
        number.to_bytes((number if number >= 0 else ~number).bit_length() // 8 + 1, "big", signed=True)
    ).decode()


def _timestamp_text(pattern: str) -> st.SearchStrategy[str]:
    return st.integers(0, 4_000_000_000_000).map(
        lambda ms: (_EPOCH + datetime.timedelta(milliseconds=ms)).strftime(TIME_FORMATS[pattern])
    )


# (schema document, payload strategy) of each primitive and logical type
_PRIMITIVES = {
    "int8": ({"type": "int8"}, st.integers(-128, 127)),
    "int16": ({"type": "int16"}, st.integers(-32768, 32767)),
    "int32": ({"type": "int32"}, st.integers(-(2**31), 2**31 - 1)),
    "int64": ({"type": "int64"}, st.integers(-(2**63), 2**63 - 1) | _MILLIS),
    "float": ({"type": "float"}, st.floats(width=32, allow_nan=False, allow_infinity=False)),
    "double": ({"type": "double"}, st.floats(allow_nan=False, allow_infinity=False)),
    "boolean": ({"type": "boolean"}, st.booleans()),
    "string": ({"type": "string"}, _TEXTS),
    "bytes": ({"type": "bytes"}, st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode())),
    "decimal": (
        {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "2"}},
        st.integers(-(10**12), 10**12).map(_unscaled),
    ),
    "date": ({"type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1}, st.integers(-20000, 50000)),
    "time": ({"type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1}, st.integers(0, 86_399_999)),
    "timestamp": ({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}, _MILLIS),
    "ts_text": ({"type": "string"}, _timestamp_text("yyyy-MM-dd HH:mm:ss")),
}
PRIMITIVE_KINDS = tuple(_PRIMITIVES)


@st.composite
def typed(draw, kind: str, depth: int = 0) -> tuple[dict, object]:
    """(schema document, payload) of a field of `kind` (a primitive kind, "array", "map" or "struct"), maybe
    optional, maybe with a default, its payload maybe null where that reads."""
    if kind == "struct":
        document, value = draw(structs(NESTED, depth + 1))
    elif kind == "array":
        item_schema, item = _PRIMITIVES[draw(st.sampled_from(["int32", "string"]))]
        document = {"type": "array", "items": {**item_schema, "optional": True}}
        value = draw(st.lists(st.none() | item, max_size=3))
    elif kind == "map":
        if draw(st.booleans()):
            document = {"type": "map", "keys": {"type": "string"}, "values": {"type": "int64", "optional": True}}
            value = draw(st.dictionaries(st.sampled_from(["k", "l", "m"]), st.none() | st.integers(-5, 5), max_size=3))
        else:  # keys that are not strings: JsonConverter's array of [key, value] pairs
            document = {"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}
            value = [[k, v] for k, v in draw(st.dictionaries(st.integers(-3, 3), _TEXTS, max_size=3)).items()]
    else:
        schema, payload = _PRIMITIVES[kind]
        document, value = dict(schema), draw(payload)
        if draw(st.integers(0, 5)) == 0:
            document["default"] = draw(payload)
    document["optional"] = draw(st.booleans())
    if (document["optional"] or "default" in document) and draw(st.integers(0, 4)) == 0:
        value = None
    return document, value


@st.composite
def structs(draw, names: tuple[str, ...] = FIELDS, depth: int = 0) -> tuple[dict, dict]:
    """(struct schema document, payload) with some of `names` in a drawn order."""
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    kinds = PRIMITIVE_KINDS + (("array", "map", "struct") if depth == 0 else ("array",))
    fields, payload = [], {}
    for name in chosen:
        kind = draw(st.sampled_from(("struct",) if name == "nested" and depth == 0 else kinds))
        if name == "ts":
            kind = draw(st.sampled_from(["timestamp", "int64", "ts_text", "date", "time"]))
        document, value = draw(typed(kind, depth))
        fields.append({**document, "field": name})
        payload[name] = value
    document = {"type": "struct", "fields": fields, "optional": draw(st.booleans())}
    if draw(st.booleans()):
        document.update(name="com.example.Value", version=draw(st.integers(1, 3)))
    return document, payload


_JSON_LEAVES = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | _TEXTS
)
schemaless_maps = st.dictionaries(
    st.sampled_from(FIELDS + NESTED),
    st.recursive(
        _JSON_LEAVES,
        lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(NESTED), inner, max_size=3),
        max_leaves=6,
    ),
    max_size=5,
)


def _envelope(document: dict, payload: object) -> WirePart:
    return WirePart(True, orjson.dumps({"schema": document, "payload": payload}))


def _plain(value: object) -> WirePart:
    return WirePart(False, orjson.dumps(value))


values = st.one_of(
    structs().map(lambda pair: _envelope(*pair)),
    structs().map(lambda pair: _envelope(*pair)),
    schemaless_maps.map(_plain),
    st.sampled_from(["string", "int64", "ts_text", "timestamp"]).flatmap(typed).map(lambda pair: _envelope(*pair)),
    _JSON_LEAVES.map(_plain),
    st.none(),
)
keys = st.one_of(
    st.none(),
    _TEXTS.map(_plain),
    st.sampled_from(["string", "int64"]).flatmap(typed).map(lambda pair: _envelope(*pair)),
    structs(("id", "name", "ts")).map(lambda pair: _envelope(*pair)),
    schemaless_maps.map(_plain),
)
headers = st.lists(st.tuples(st.sampled_from(HEADER_NAMES), st.none() | st.binary(max_size=4)), max_size=3).map(tuple)


def records(value_strategy: st.SearchStrategy = values) -> st.SearchStrategy[WireRecord]:
    return st.builds(
        WireRecord,
        st.sampled_from(TOPICS),
        st.integers(0, 3),
        st.integers(0, 10**9),
        st.none() | _MILLIS.filter(lambda ms: ms >= 0),
        keys,
        value_strategy,
        headers,
    )
