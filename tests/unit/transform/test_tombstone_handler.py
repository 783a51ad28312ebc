"""Confluent's TombstoneHandler: tombstones dropped with a WARN (default) or DEBUG event, or failed; others pass."""

from __future__ import annotations

import json
import logging

import pytest

from sink_engine.convert.schema import Schema
from sink_engine.errors import ConfigError
from sink_engine.transform.errors import TransformError
from sink_engine.transform.tombstone_handler import TombstoneHandler
from tests.unit.transform.more_records import options, record


@pytest.mark.parametrize(
    "behavior, level", [(None, logging.WARNING), ("warn", logging.WARNING), ("ignore", logging.DEBUG)]
)
@pytest.mark.parametrize("schema", [None, Schema("string", True)])
def test_tombstones_are_dropped_and_logged(behavior, level, schema, caplog):
    handler = TombstoneHandler.from_options(options(behavior=behavior))
    with caplog.at_level(logging.DEBUG, logger="sink_engine"):
        assert handler.apply(record(key="k", value=None, value_schema=schema, offset=7)) is None
    [logged] = caplog.records
    assert logged.levelno == level
    assert json.loads(logged.getMessage()) == {
        "event": "TOMBSTONE_IGNORED",
        "topic": "topic",
        "partition": 0,
        "offset": 7,
    }


def test_fail_makes_a_tombstone_a_bad_record():
    with pytest.raises(TransformError, match="tombstone"):
        TombstoneHandler.from_options(options(behavior="fail")).apply(record(key="k", value=None))


@pytest.mark.parametrize("behavior", ["warn", "ignore", "fail"])
@pytest.mark.parametrize("value", ["", 0, {}, b""])
def test_records_with_a_value_pass_unchanged(behavior, value):
    given = record(key="k", value=value)
    assert TombstoneHandler.from_options(options(behavior=behavior)).apply(given) is given


def test_an_unknown_behavior_names_the_key():
    with pytest.raises(ConfigError, match="transforms.t.behavior"):
        TombstoneHandler.from_options(options(behavior="drop"))
