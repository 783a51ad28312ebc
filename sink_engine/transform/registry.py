"""Transform and predicate classes by the class names Kafka Connect configs use (`transforms.<alias>.type`,
`predicates.<alias>.type`): each maps to this package's module and class, and the role of a `$Key` / `$Value`
variant. Modules are imported when a config names them. A name not listed here is a ConfigError naming the key."""

from __future__ import annotations

import importlib
from typing import Any

from sink_engine.errors import ConfigError
from sink_engine.transform.base import Predicate, Transform

_KAFKA = "org.apache.kafka.connect.transforms"
_CONFLUENT = "io.confluent.connect.transforms"


def _both(java_name: str, module: str, cls: str) -> dict[str, tuple[str, str, str | None]]:
    return {f"{java_name}$Key": (module, cls, "key"), f"{java_name}$Value": (module, cls, "value")}


# class name -> (module under sink_engine.transform, class, role)
TRANSFORMS: dict[str, tuple[str, str, str | None]] = {
    **_both(f"{_KAFKA}.InsertField", "insert_field", "InsertField"),
    **_both(f"{_KAFKA}.ReplaceField", "replace_field", "ReplaceField"),
    **_both(f"{_KAFKA}.MaskField", "mask_field", "MaskField"),
    **_both(f"{_KAFKA}.TimestampConverter", "timestamp_converter", "TimestampConverter"),
    **_both(f"{_KAFKA}.ExtractField", "extract_field", "ExtractField"),
    **_both(f"{_KAFKA}.HoistField", "hoist_field", "HoistField"),
    **_both(f"{_KAFKA}.Flatten", "flatten", "Flatten"),
    **_both(f"{_KAFKA}.Cast", "cast", "Cast"),
    **_both(f"{_KAFKA}.SetSchemaMetadata", "set_schema_metadata", "SetSchemaMetadata"),
    **_both(f"{_KAFKA}.HeaderFrom", "headers", "HeaderFrom"),
    f"{_KAFKA}.ValueToKey": ("value_to_key", "ValueToKey", None),
    f"{_KAFKA}.RegexRouter": ("routers", "RegexRouter", None),
    f"{_KAFKA}.TimestampRouter": ("routers", "TimestampRouter", None),
    f"{_KAFKA}.Filter": ("filter", "Filter", None),
    f"{_KAFKA}.InsertHeader": ("headers", "InsertHeader", None),
    f"{_KAFKA}.DropHeaders": ("headers", "DropHeaders", None),
    f"{_CONFLUENT}.TombstoneHandler": ("tombstone_handler", "TombstoneHandler", None),
    **_both(f"{_CONFLUENT}.Drop", "drop", "Drop"),
    "io.debezium.transforms.ExtractNewRecordState": ("extract_new_record_state", "ExtractNewRecordState", None),
}
PREDICATES: dict[str, tuple[str, str, str | None]] = {
    f"{_KAFKA}.predicates.TopicNameMatches": ("predicates", "TopicNameMatches", None),
    f"{_KAFKA}.predicates.HasHeaderKey": ("predicates", "HasHeaderKey", None),
    f"{_KAFKA}.predicates.RecordIsTombstone": ("predicates", "RecordIsTombstone", None),
}


def transform_class(type_name: str, key: str) -> tuple[type[Transform], str | None]:
    """The class and role of a transform class name; ConfigError naming `key` when it is not built."""
    return _load(TRANSFORMS, type_name, key, "transform")


def predicate_class(type_name: str, key: str) -> tuple[type[Predicate], str | None]:
    return _load(PREDICATES, type_name, key, "predicate")


def _load(table: dict, type_name: str, key: str, what: str) -> tuple[Any, str | None]:
    entry = table.get(type_name.strip())
    if entry is None:
        raise ConfigError(
            key, f"{type_name!r} is not a {what} class this engine has (built: {', '.join(sorted(table))})"
        )
    module, cls, role = entry
    return getattr(importlib.import_module(f"sink_engine.transform.{module}"), cls), role
