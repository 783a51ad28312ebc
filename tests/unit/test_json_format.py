"""JsonFormat encodes one value per line, like the Confluent connector, and is byte-deterministic."""

from __future__ import annotations

import gzip
import json

import pytest

from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.errors import RecordError
from sink_engine.format.json_format import JsonFormat
from sink_engine.records import RecordChunk, ValueColumn


def chunk(values):
    n = len(values)
    return RecordChunk("t", 3, list(range(10, 10 + n)), values, keys=[None] * n, timestamps=[0] * n)


def test_json_values_keep_their_text_and_multiline_values_are_compacted():
    values = SchemalessJsonConverter().convert(chunk([b'{"a": 1.50}', b'{\n  "b": [1, 2]\n}', b" 7 "]))
    body = JsonFormat().encode(values).body
    assert body == b'{"a": 1.50}\n{"b":[1,2]}\n 7 \n'
    assert [json.loads(line) for line in body.splitlines()] == [{"a": 1.5}, {"b": [1, 2]}, 7]


def test_malformed_json_names_the_record():
    with pytest.raises(RecordError) as caught:
        SchemalessJsonConverter().convert(chunk([b"{}", b"{oops"]))
    assert (caught.value.topic, caught.value.partition, caught.value.offset) == ("t", 3, 11)
    assert "t-3@11" in str(caught.value)


def test_strings_and_bytes_are_json_strings():
    assert JsonFormat().encode(ValueColumn("string", ['a"b', "é"])).body == b'"a\\"b"\n"\xc3\xa9"\n'
    assert JsonFormat().encode(ValueColumn("bytes", [b"\x00\x01"])).body == b'"AAE="\n'


def test_gzip_is_deterministic_and_readable():
    fmt = JsonFormat("gzip", 9)
    values = ValueColumn("json", [b'{"n":%d}' % i for i in range(1000)])
    first, second = fmt.encode(values).body, fmt.encode(values).body
    assert first == second and fmt.extension == ".json.gz"
    assert gzip.decompress(first).count(b"\n") == 1000


def test_non_finite_floats_are_written_as_json_converter_writes_them():
    # given struct values holding NaN and infinities (an Avro double; a float32 Cast past 3.4e38), and a plain null
    values = [{"a": float("inf"), "b": None, "c": [float("nan"), 1.5]}, {"a": -float("inf"), "b": 2.0, "c": []}]
    # when JsonFormat writes them
    body = JsonFormat().encode(ValueColumn("struct", values)).body
    # then each is Jackson's quoted text, as Kafka's JsonConverter writes it; a null stays null
    assert body == b'{"a":"Infinity","b":null,"c":["NaN",1.5]}\n{"a":"-Infinity","b":2.0,"c":[]}\n'
