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

CASES = oracle_cases()
# Every type JsonConverter names (apache/kafka connect/json JsonSchema.java) and the logical types
TYPES = {"boolean", "int8", "int16", "int32", "int64", "float32", "float64", "bytes", "string", "array",
         "map_string_keys", "map_int_keys", "struct", "decimal", "date", "time", "timestamp"}


def test_the_oracle_covers_every_connect_type():
    assert TYPES <= {case.name for case in CASES}


@pytest.mark.parametrize("case", [c for c in CASES if c.plain != b"null"], ids=lambda c: c.name)
def test_an_envelope_of_kafkas_json_converter_is_written_as_its_json_format_writes_the_value(case):
    column = EnvelopeJsonConverter().convert(RecordChunk("t", 0, [0], [case.envelope], keys=[None], timestamps=[0]))
    [line] = json_lines_writer()(column)
    assert orjson.loads(line) == orjson.loads(case.plain)


@pytest.mark.parametrize("case", [c for c in CASES if c.plain == b"null"], ids=lambda c: c.name)
def test_a_null_payload_under_an_optional_schema_is_a_null_value(case):
    column = EnvelopeJsonConverter().convert(RecordChunk("t", 0, [0], [case.envelope], keys=[None], timestamps=[0]))
    assert column.null_positions() == [0]
