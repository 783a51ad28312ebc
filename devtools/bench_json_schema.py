"""JSON Schema + registry to Parquet/snappy in one process, no Kafka or S3: the converter and the format alone, on the
click events of devtools/json_schema_events.py. Rows: the engine's columnar path (convert/json_schema_arrow.py), its
general path (orjson and connect_json per payload, Table.from_pylist), and the same events as schemaless JSON
(JsonConverter, schemas.enable=false). Prints records/s and CPU µs per record. Usage:
    python -m devtools.bench_json_schema [--records 200000] [--batch 10000] [--repeat 3]
Needs the dev dependencies (tests.schema_registry_server).
"""
from __future__ import annotations

import argparse
import io
import json

import orjson

from devtools.avro_events import click_event
from devtools.bench_avro import measure
from devtools.json_schema_events import CLICK_JSON_SCHEMA, json_schema_values
from sink_engine.convert import confluent_json_schema_converter
from sink_engine.convert.confluent_json_schema_converter import ConfluentJsonSchemaConverter
from sink_engine.convert.confluent_registry import SubjectNames, registry_client
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.format.base import FileContext
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import RecordChunk
from tests.schema_registry_server import SchemaRegistryServer


def engine(converter, values: list, batch: int) -> None:
    """Convert batch by batch, then one Parquet file of all the batches (as a file of flush.size records)."""
    out = io.BytesIO()
    encoder = ParquetFormat("snappy").open(FileContext("bench", 0, 0), out)
    for start in range(0, len(values), batch):
        chunk = RecordChunk("bench", 0, list(range(start, start + batch)), values[start:start + batch],
                            keys=[], timestamps=[])
        column = converter.convert(chunk)
        encoder.write(encoder.prepare(column, chunk.offsets), [len(v) for v in chunk.values])
    encoder.finish()


def json_schema_converter(client, values: list, columnar: bool) -> ConfluentJsonSchemaConverter:
    """The converter; without `columnar`, its decoder is fetched (on a first value) while the reader is hidden."""
    converter = ConfluentJsonSchemaConverter(client, SubjectNames("bench"))
    if not columnar:
        saved = confluent_json_schema_converter.arrow_reader
        confluent_json_schema_converter.arrow_reader = lambda schema: None
        try:
            converter.convert(RecordChunk("bench", 0, [0], values[:1], keys=[], timestamps=[]))
        finally:
            confluent_json_schema_converter.arrow_reader = saved
    return converter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with SchemaRegistryServer() as registry:
        schema_id = registry.register("bench-value", json.dumps(CLICK_JSON_SCHEMA), schema_type="JSON")["id"]
        client = registry_client({"schema.registry.url": registry.url, "basic.auth.credentials.source": "url"})
        values = json_schema_values(args.records, schema_id)
        plain = [orjson.dumps(click_event(i)) for i in range(args.records)]
        rows = {"engine, columnar (pyarrow JSON reader)": lambda: engine(json_schema_converter(client, values, True),
                                                                         values, args.batch),
                "engine, general (connect_json per value)": lambda: engine(json_schema_converter(client, values, False),
                                                                           values, args.batch),
                "engine, same events as schemaless JSON": lambda: engine(SchemalessJsonConverter(False), plain,
                                                                         args.batch)}
        print(f"{'JSON Schema+registry -> Parquet/snappy':<44} {'records/s':>12} {'CPU µs/rec':>11}")
        for name, run in rows.items():
            seconds, cpu = measure(run, args.repeat)
            print(f"{name:<44} {args.records / seconds:>12,.0f} {cpu / args.records * 1e6:>11.2f}")


if __name__ == "__main__":
    main()
