"""Hypothesis strategies of the options of every transform the engine implements (`OPTIONS`, by Connect class name
without its `$Key` / `$Value`), of predicates, and of Debezium change events for ExtractNewRecordState.

`combination(type, options)` names what one generated config covers: the class and, per option, the option with
its value where the option is an enumeration (a type, a unit, a mode, a Cast target, a boolean) and with "set"
where it is free text (field names, patterns); the differential test counts the distinct ones."""

from __future__ import annotations

import orjson
from hypothesis import strategies as st

from tests.connect_transforms_oracle import WirePart
from tests.unit.transform.oracle_records import FIELDS, HEADER_NAMES, NESTED, TIME_FORMATS, typed

KAFKA, DEBEZIUM = "org.apache.kafka.connect.transforms", "io.debezium.transforms"
CAST_TYPES = ("int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string")
_NAMES = st.sampled_from(FIELDS + NESTED + ("missing",))
_SOME_NAMES = st.lists(_NAMES, min_size=1, max_size=3, unique=True).map(",".join)
_BOOL = st.sampled_from(["true", "false"])


def _optional(**strategies) -> st.SearchStrategy[dict[str, str]]:
    """Options each set or not (st.fixed_dictionaries' optional keys)."""
    return st.fixed_dictionaries({}, optional=strategies)


def _insert_spec() -> st.SearchStrategy[str]:
    return st.tuples(
        st.sampled_from(["topic_f", "part_f", "off_f", "ts_f", "static_f", "id"]), st.sampled_from(["", "!", "?"])
    ).map("".join)


def _cast_spec() -> st.SearchStrategy[str]:
    whole = st.sampled_from(CAST_TYPES)
    fields = st.lists(st.tuples(_NAMES, st.sampled_from(CAST_TYPES + ("bytes",))).map(":".join), min_size=1, max_size=3)
    return whole | fields.map(",".join)


_RNWD = {"replace.null.with.default": _BOOL}
OPTIONS: dict[str, st.SearchStrategy[dict[str, str]]] = {
    f"{KAFKA}.InsertField": st.tuples(
        _optional(
            **{
                "topic.field": _insert_spec(),
                "partition.field": _insert_spec(),
                "offset.field": _insert_spec(),
                "timestamp.field": _insert_spec(),
                **_RNWD,
            }
        ),
        _optional(**{"static.field": _insert_spec(), "static.value": st.sampled_from(["v", "42"])}),
    ).map(lambda parts: {**parts[0], **parts[1]}),
    f"{KAFKA}.ReplaceField": _optional(
        exclude=_SOME_NAMES,
        include=_SOME_NAMES,
        blacklist=_SOME_NAMES,
        whitelist=_SOME_NAMES,
        renames=st.lists(
            st.tuples(_NAMES, st.sampled_from(["id2", "renamed", "name"])).map(":".join), min_size=1, max_size=2
        ).map(",".join),
        **_RNWD,
    ),
    f"{KAFKA}.MaskField": st.fixed_dictionaries(
        {"fields": _SOME_NAMES},
        optional={"replacement": st.sampled_from(["0", "12", "300", "-1.5", "abc", "1e3"]), **_RNWD},
    ),
    f"{KAFKA}.TimestampConverter": st.fixed_dictionaries(
        {"target.type": st.sampled_from(["string", "unix", "Date", "Time", "Timestamp"])},
        optional={
            "field": st.sampled_from(["ts", "amount", "missing"]),
            "format": st.sampled_from(list(TIME_FORMATS)),
            "unix.precision": st.sampled_from(["seconds", "milliseconds", "microseconds", "nanoseconds"]),
            **_RNWD,
        },
    ),
    f"{KAFKA}.ExtractField": st.fixed_dictionaries(
        {"field": st.sampled_from(["id", "name", "nested", "missing", "nested.x", "nested.ts", "`nested`.y"])},
        optional={"field.syntax.version": st.sampled_from(["V1", "V2"]), **_RNWD},
    ),
    f"{KAFKA}.HoistField": st.fixed_dictionaries({"field": st.sampled_from(["wrapped", "id"])}),
    f"{KAFKA}.Flatten": _optional(delimiter=st.sampled_from([".", "_", "__"])),
    f"{KAFKA}.Cast": st.fixed_dictionaries({"spec": _cast_spec()}, optional=_RNWD),
    f"{KAFKA}.SetSchemaMetadata": _optional(
        **{
            "schema.name": st.sampled_from(["com.example.Renamed", "x"]),
            "schema.version": st.sampled_from(["1", "7"]),
            **_RNWD,
        }
    ),
    f"{KAFKA}.HeaderFrom": st.integers(1, 2).flatmap(
        lambda n: st.fixed_dictionaries(
            {
                "fields": st.lists(_NAMES, min_size=n, max_size=n, unique=True).map(",".join),
                "headers": st.lists(st.sampled_from(HEADER_NAMES + ("hf",)), min_size=n, max_size=n).map(",".join),
                "operation": st.sampled_from(["copy", "move"]),
            },
            optional=_RNWD,
        )
    ),
    f"{KAFKA}.ValueToKey": st.fixed_dictionaries({"fields": _SOME_NAMES}, optional=_RNWD),
    f"{KAFKA}.RegexRouter": st.sampled_from(
        [
            {"regex": "(.*)", "replacement": "copy-$1"},
            {"regex": "db\\.(\\w+)\\.(\\w+)", "replacement": "$2"},
            {"regex": "orders", "replacement": "o"},
            {"regex": "(?<base>.*)s", "replacement": "${base}"},
            {"regex": "t-(\\d)", "replacement": "\\$$1"},
        ]
    ),
    f"{KAFKA}.TimestampRouter": _optional(
        **{
            "topic.format": st.sampled_from(["${topic}-${timestamp}", "x_${timestamp}", "${topic}"]),
            "timestamp.format": st.sampled_from(["yyyyMMdd", "yyyy-MM-dd-HH", "YYYY-ww", "yy.D", "EEE MMM d"]),
        }
    ),
    f"{KAFKA}.Filter": st.just({}),
    f"{KAFKA}.InsertHeader": st.fixed_dictionaries(
        {
            "header": st.sampled_from(HEADER_NAMES + ("new",)),
            "value.literal": st.sampled_from(
                [
                    "x",
                    "",
                    "null",
                    "123",
                    "-40000",
                    "3.5",
                    "true",
                    "2024-01-02",
                    "12:30:00.000Z",
                    "2024-01-02T03:04:05.678Z",
                    "1e400",
                    "99999999999999999999",
                    "a b",
                ]
            ),
        }
    ),
    f"{KAFKA}.DropHeaders": st.fixed_dictionaries(
        {"headers": st.lists(st.sampled_from(HEADER_NAMES + ("none",)), min_size=1, max_size=2).map(",".join)}
    ),
    f"{DEBEZIUM}.ExtractNewRecordState": _optional(
        **{
            "delete.tombstone.handling.mode": st.sampled_from(
                ["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"]
            ),
            "drop.tombstones": _BOOL,
            "delete.handling.mode": st.sampled_from(["drop", "none", "rewrite"]),
            "add.fields": st.lists(
                st.sampled_from(
                    ["op", "ts_ms", "table", "db", "lsn", "source.ts_ms:src_ts", "transaction.id", "missing"]
                ),
                min_size=1,
                max_size=3,
                unique=True,
            ).map(",".join),
            "add.headers": st.lists(
                st.sampled_from(["op", "ts_ms", "db", "source.lsn", "transaction.total_order"]),
                min_size=1,
                max_size=2,
                unique=True,
            ).map(",".join),
            "add.fields.prefix": st.sampled_from(["__", "x_", ""]),
            "add.headers.prefix": st.sampled_from(["__", "h_"]),
            "route.by.field": st.sampled_from(["name", "id"]),
            **_RNWD,
        }
    ),
}
PREDICATES = {
    f"{KAFKA}.predicates.TopicNameMatches": st.fixed_dictionaries(
        {"pattern": st.sampled_from(["orders", "db\\..*", "t-\\d"])}
    ),
    f"{KAFKA}.predicates.HasHeaderKey": st.fixed_dictionaries({"name": st.sampled_from(HEADER_NAMES)}),
    f"{KAFKA}.predicates.RecordIsTombstone": st.just({}),
}
_FREE_TEXT = {
    "field",
    "fields",
    "headers",
    "header",
    "exclude",
    "include",
    "blacklist",
    "whitelist",
    "renames",
    "regex",
    "replacement",
    "pattern",
    "name",
    "topic.format",
    "static.value",
    "schema.name",
    "add.fields",
    "add.headers",
    "route.by.field",
    "topic.field",
    "partition.field",
    "offset.field",
    "timestamp.field",
    "static.field",
}


def combination(type_name: str, options: dict[str, str]) -> frozenset[tuple[str, str]]:
    """What one config of `type_name` covers (see the module's docstring)."""
    items = {("type", type_name)}
    for name, value in options.items():
        if name == "spec":
            targets = sorted({item.split(":")[-1] for item in value.split(",")})
            items.add(("spec", f"{'field' if ':' in value else 'whole'}:{','.join(targets)}"))
        else:
            items.add((name, "set" if name in _FREE_TEXT else value))
    return frozenset(items)


_SOURCE = {
    "type": "struct",
    "name": "io.debezium.connector.postgresql.Source",
    "optional": False,
    "fields": [
        {"field": "db", "type": "string", "optional": False},
        {"field": "table", "type": "string", "optional": True},
        {"field": "lsn", "type": "int64", "optional": True},
        {"field": "ts_ms", "type": "int64", "optional": False},
    ],
}
_TRANSACTION = {
    "type": "struct",
    "name": "event.block",
    "version": 1,
    "optional": True,
    "fields": [
        {"field": "id", "type": "string", "optional": False},
        {"field": "total_order", "type": "int64", "optional": False},
        {"field": "data_collection_order", "type": "int64", "optional": False},
    ],
}
_ROW_FIELDS = ("id", "name", "amount", "note")


@st.composite
def change_events(draw) -> WirePart | None:
    """A Debezium change event as JsonConverter envelope (create, read, update, delete, truncate), or a tombstone."""
    op = draw(st.sampled_from(["c", "r", "u", "d", "t", "tombstone"]))
    if op == "tombstone":
        return None
    row_fields = []
    for name in draw(st.lists(st.sampled_from(_ROW_FIELDS), min_size=1, max_size=4, unique=True)):
        kind = (
            "string" if name == "name" else draw(st.sampled_from(["int32", "int64", "string", "decimal", "timestamp"]))
        )
        row_fields.append((name, draw(typed(kind))))
    row = {
        "type": "struct",
        "name": "db.public.users.Value",
        "optional": True,
        "fields": [{**document, "field": name} for name, (document, _) in row_fields],
    }

    def state():
        return {name: value for name, (_, value) in row_fields}

    before = state() if op in ("u", "d") else None
    after = state() if op in ("c", "r", "u") else None
    schema = {
        "type": "struct",
        "name": "db.public.users.Envelope",
        "optional": False,
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            {**_SOURCE, "field": "source"},
            {**_TRANSACTION, "field": "transaction"},
            {"field": "op", "type": "string", "optional": False},
            {"field": "ts_ms", "type": "int64", "optional": True},
        ],
    }
    transaction = draw(st.none() | st.just({"id": "571", "total_order": 3, "data_collection_order": 1}))
    source = {
        "db": "shop",
        "table": draw(st.none() | st.sampled_from(["users", "orders"])),
        "lsn": draw(st.none() | st.integers(0, 10**9)),
        "ts_ms": 1710032523000,
    }
    payload = {
        "before": before,
        "after": after,
        "source": source,
        "transaction": transaction,
        "op": op,
        "ts_ms": draw(st.none() | st.integers(0, 2 * 10**12)),
    }
    return WirePart(True, orjson.dumps({"schema": schema, "payload": payload}))


_RN = ("replace.null.with.default",)
# Every option each transform takes (Kafka 3.9's and Debezium 3.6's ConfigDefs; ExtractNewRecordState's legacy keys
# are the engine's), which the generated configs must all have set at least once.
TAKES = {
    f"{KAFKA}.InsertField": (
        "topic.field",
        "partition.field",
        "offset.field",
        "timestamp.field",
        "static.field",
        "static.value",
    )
    + _RN,
    f"{KAFKA}.ReplaceField": ("exclude", "include", "blacklist", "whitelist", "renames") + _RN,
    f"{KAFKA}.MaskField": ("fields", "replacement") + _RN,
    f"{KAFKA}.TimestampConverter": ("target.type", "field", "format", "unix.precision") + _RN,
    f"{KAFKA}.ExtractField": ("field", "field.syntax.version") + _RN,
    f"{KAFKA}.HoistField": ("field",),
    f"{KAFKA}.Flatten": ("delimiter",),
    f"{KAFKA}.Cast": ("spec",) + _RN,
    f"{KAFKA}.SetSchemaMetadata": ("schema.name", "schema.version") + _RN,
    f"{KAFKA}.HeaderFrom": ("fields", "headers", "operation") + _RN,
    f"{KAFKA}.ValueToKey": ("fields",) + _RN,
    f"{KAFKA}.RegexRouter": ("regex", "replacement"),
    f"{KAFKA}.TimestampRouter": ("topic.format", "timestamp.format"),
    f"{KAFKA}.Filter": (),
    f"{KAFKA}.InsertHeader": ("header", "value.literal"),
    f"{KAFKA}.DropHeaders": ("headers",),
    f"{DEBEZIUM}.ExtractNewRecordState": (
        "delete.tombstone.handling.mode",
        "drop.tombstones",
        "delete.handling.mode",
        "add.fields",
        "add.headers",
        "add.fields.prefix",
        "add.headers.prefix",
        "route.by.field",
    )
    + _RN,
}
