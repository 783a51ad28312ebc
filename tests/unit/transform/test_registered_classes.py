"""The registry's class names for TimestampConverter, the header SMTs, TombstoneHandler, Drop and
ExtractNewRecordState resolve to this package's classes, with the role of their $Key / $Value variant."""

from __future__ import annotations

import pytest

from sink_engine.transform.registry import transform_class


@pytest.mark.parametrize(
    "type_name, role",
    [
        ("org.apache.kafka.connect.transforms.TimestampConverter$Key", "key"),
        ("org.apache.kafka.connect.transforms.TimestampConverter$Value", "value"),
        ("org.apache.kafka.connect.transforms.InsertHeader", None),
        ("org.apache.kafka.connect.transforms.DropHeaders", None),
        ("org.apache.kafka.connect.transforms.HeaderFrom$Key", "key"),
        ("org.apache.kafka.connect.transforms.HeaderFrom$Value", "value"),
        ("io.confluent.connect.transforms.TombstoneHandler", None),
        ("io.confluent.connect.transforms.Drop$Key", "key"),
        ("io.confluent.connect.transforms.Drop$Value", "value"),
        ("io.debezium.transforms.ExtractNewRecordState", None),
    ],
)
def test_the_registry_names_these_classes(type_name, role):
    cls, found_role = transform_class(type_name, "transforms.t.type")
    assert found_role == role and callable(cls.from_options) and callable(cls.apply)
