"""A round trip through Kafka's real JsonConverter (tests/connect_json_oracle.py) for every Connect type: the
envelope it writes (schemas.enable=true) is read by this engine's converter and written by JsonFormat, which must
give the JSON that JsonConverter writes for the same value with schemas.enable=false (what the Confluent S3 sink's
JsonFormat writes); a null value (a null payload under an optional schema) is read as a null value."""

from __future__ import annotations

import orjson
import pytest

from sink_engine.convert.envelope_json_converter import EnvelopeJsonConverter
from sink_engine.format.json_format import json_lines_writer
from sink_engine.records import RecordChunk
from tests.connect_json_oracle import oracle_cases

# The cases of devtools/jvm/connect-json/ConnectJsonOracle.java: every type JsonConverter names (apache/kafka
# connect/json JsonSchema.java), the logical types, nulls, a default, and values that are not structs
VALUES = [
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "float32",
    "float64",
    "bytes",
    "string",
    "optional_null",
    "default",
    "array",
    "map_string_keys",
    "map_int_keys",
    "struct",
    "struct_null",
    "decimal",
    "decimal_zero_scale",
    "date",
    "time",
    "timestamp",
    "top_int32",
    "top_float64",
    "top_array",
]
NULLS = ["top_optional_null"]


@pytest.fixture(scope="module")
def cases() -> dict:
    """The oracle's output by case name (one JVM run for the module)."""
    return {case.name: case for case in oracle_cases()}


def test_the_oracle_writes_every_case(cases):
    assert sorted(cases) == sorted(VALUES + NULLS)


def read(case):
    return EnvelopeJsonConverter().convert(RecordChunk("t", 0, [0], [case.envelope], keys=[None], timestamps=[0]))


@pytest.mark.parametrize("name", VALUES)
def test_an_envelope_of_kafkas_json_converter_is_written_as_its_json_format_writes_the_value(cases, name):
    [line] = json_lines_writer()(read(cases[name]))
    assert orjson.loads(line) == orjson.loads(cases[name].plain)


@pytest.mark.parametrize("name", NULLS)
def test_a_null_payload_under_an_optional_schema_is_a_null_value(cases, name):
    assert cases[name].plain == b"null" and read(cases[name]).null_positions() == [0]
