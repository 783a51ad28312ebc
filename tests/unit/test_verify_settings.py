"""Which layouts verify proves span by span: a topic-partition's files follow each other only with the
DefaultPartitioner, tombstones not in files of their own, and no open file per schema."""

from __future__ import annotations

import pytest

from sink_engine.errors import ConfigError
from sink_engine.target.s3_objects.verify.settings import VerifySettings
from sink_engine.validation import parse_checked_config
from tests.builders import connector_keys

BASE = connector_keys({"value.converter.schemas.enable": "false"})


@pytest.mark.parametrize(
    "changes, contiguous",
    [
        ({}, True),  # schemaless JSON: one stream
        ({"value.converter.schemas.enable": "true"}, False),  # Connect envelopes: a file per schema at once
        ({"value.converter.schemas.enable": "true", "sink.schema.files": "rotate"}, True),  # Confluent's boundaries
        ({"value.converter.schemas.enable": "true", "schema.compatibility": "BACKWARD"}, True),  # projected, one file
        ({"value.converter": "StringConverter"}, True),
        ({"format.class": "EnvelopeFormat", "value.converter.schemas.enable": "true"}, True),  # no value converted
        ({"partitioner.class": "FieldPartitioner", "partition.field.name": "a"}, False),
        ({"behavior.on.null.values": "write"}, False),
    ],
)
def test_files_follow_each_other_only_in_one_stream(changes, contiguous):
    assert VerifySettings.from_config(parse_checked_config({**BASE, **changes})).contiguous is contiguous


def test_a_router_that_routes_by_record_is_refused_naming_it():
    config = parse_checked_config(
        {**BASE, "transforms": "byDay", "transforms.byDay.type": "org.apache.kafka.connect.transforms.TimestampRouter"}
    )
    with pytest.raises(
        ConfigError, match="config key 'transforms.byDay.type': routes by record .* so verify cannot name the folders"
    ):
        VerifySettings.from_config(config)
