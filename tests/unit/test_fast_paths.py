"""Fast paths of the record path give the same bytes as the general path, on mixed input: JSON nulls, unicode,
nested objects and arrays, number spellings, a value spanning lines and a large value."""

from __future__ import annotations

import orjson
import pytest

from sink_engine.config import parse_config
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.convert.registry import converter_for
from sink_engine.convert.settings import ConverterSettings
from sink_engine.format.base import FileContext
from sink_engine.format.json_format import JsonFormat
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.partition.field import FieldPartitioner
from sink_engine.records import RecordChunk

MIXED = [
    b'{"id":1,"name":"h\\u00e9llo \xe2\x9c\x93 \xf0\x9f\x98\x80","tags":null,"region":"eu"}',
    b'{"id":2,"name":null,"nested":{"a":[1,{"b":[true,false,null]}],"c":{}},"region":"us"}',
    b'{"id":3,"price":1.50,"big":12345678901234567890,"exp":1e3,"region":"eu"}',
    b'{\n  "id": 4,\n  "region": "us",\n  "text": "line\\nbreak"\n}',
    b'{"id":5,"region":"eu","large":"' + b"x" * 3_000_000 + b'"}',
    b'{"id":6,"region":"\xe6\x9d\xb1\xe4\xba\xac","empty":"","arr":[]}',
]
CONTEXT = FileContext("mixed", 0, 0)


def chunk() -> RecordChunk:
    return RecordChunk(
        "mixed", 0, list(range(len(MIXED))), list(MIXED), keys=[None] * len(MIXED), timestamps=[0] * len(MIXED)
    )


def test_json_values_dropped_after_validation_give_the_same_items_and_documents():
    kept, dropped = SchemalessJsonConverter(keep_documents=True), SchemalessJsonConverter(keep_documents=False)
    general, fast = kept.convert(chunk()), dropped.convert(chunk())
    assert fast.items == general.items
    assert fast.items[3] == orjson.dumps(orjson.loads(MIXED[3]))  # the value spanning lines, on one line
    assert fast.documents() == general.documents() == [orjson.loads(v) for v in MIXED]
    partitioner = FieldPartitioner(("region",), "/")
    assert partitioner.encode(chunk(), fast) == partitioner.encode(chunk(), general)


@pytest.mark.parametrize(
    "fmt", [JsonFormat(), JsonFormat("gzip"), ParquetFormat("snappy")], ids=["json", "json-gzip", "parquet-snappy"]
)
def test_each_format_writes_the_same_bytes_from_either_converter_path(fmt):
    general = SchemalessJsonConverter(keep_documents=True).convert(chunk())
    fast = SchemalessJsonConverter(keep_documents=False).convert(chunk())
    assert fmt.encode(fast, CONTEXT).body == fmt.encode(general, CONTEXT).body


@pytest.mark.parametrize(
    "settings, keeps",
    [
        ({}, False),
        ({"partitioner.class": "FieldPartitioner", "partition.field.name": "region"}, True),
        ({"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "RecordField"}, True),
        ({"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "Record"}, False),
    ],
)
def test_parsed_values_are_kept_only_where_a_step_reads_fields(settings, keeps):
    config = parse_config(
        {
            "name": "fast",
            "config": {
                "topics": "mixed",
                "bootstrap.servers": "127.0.0.1:9",
                "s3.bucket.name": "lake",
                "flush.size": 10,
                "format.class": "JsonFormat",
                "value.converter": "JsonConverter",
                "value.converter.schemas.enable": "false",
                "key.converter": "JsonConverter",
                "key.converter.schemas.enable": "false",
                **settings,
            },
        }
    )
    assert converter_for(ConverterSettings.from_config(config, "value"), "mixed").keep_documents is keeps
    assert converter_for(ConverterSettings.from_config(config, "key"), "mixed").keep_documents is False
