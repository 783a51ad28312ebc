"""Registry values to Parquet/snappy in one process, no Kafka or S3: the converter and the format alone, on the click
events (devtools/avro_events.py, protobuf_events.py, json_schema_events.py). Per input, rows of the engine's
columnar path, its general path (the columnar reader hidden), and a reference:
- avro: columnar = polars' Avro reader (convert/avro_arrow.py); general = fastavro per datum, Table.from_pylist;
  the plain code of issue 22 (strip the header, fastavro.schemaless_reader, Table.from_pylist, Parquet).
- protobuf: columnar = ptars (convert/protobuf_arrow.py); general = upb per message, Connect values, from_pylist.
- json-schema: columnar = pyarrow's JSON reader (convert/json_schema_arrow.py); general = orjson and connect_json
  per payload, from_pylist; the same events as schemaless JSON (JsonConverter, schemas.enable=false).
Prints records/s and CPU µs per record, best of --repeat. Usage:
    python -m devtools.bench_converters [--input avro|protobuf|json-schema|all] [--records 200000] [--batch 10000]
                                        [--repeat 3]
Needs the dev dependencies (tests.schema_registry_server; protoc for protobuf).
"""

from __future__ import annotations

import argparse
import io
import json
import time
from collections.abc import Callable
from contextlib import contextmanager

import fastavro
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from sink_engine.convert.confluent_registry import SubjectNames, registry_client
from sink_engine.format.base import FileContext
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import RecordChunk
from tests.schema_registry_server import SchemaRegistryServer

INPUTS = ("avro", "protobuf", "json-schema")


def encode(converter, values: list, batch: int) -> None:
    """Convert batch by batch, then one Parquet file of all the batches (as a file of flush.size records)."""
    encoder = ParquetFormat("snappy").open(FileContext("bench", 0, 0), io.BytesIO())
    for start in range(0, len(values), batch):
        chunk = RecordChunk(
            "bench", 0, list(range(start, start + batch)), values[start : start + batch], keys=[], timestamps=[]
        )
        encoder.write(encoder.prepare(converter.convert(chunk), chunk.offsets), [len(v) for v in chunk.values])
    encoder.finish()


@contextmanager
def hidden(module, name: str, stand_in):
    """`module.name` replaced by `stand_in` for the block (a columnar reader hidden: the general path runs)."""
    saved = getattr(module, name)
    setattr(module, name, stand_in)
    try:
        yield
    finally:
        setattr(module, name, saved)


def measure(run: Callable[[], None], repeat: int) -> tuple[float, float]:
    """The best (wall seconds, CPU seconds) of `repeat` calls."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        run()
        best = min(best, (time.perf_counter() - started, time.process_time() - cpu))
    return best


def avro_rows(registry, client, records: int, batch: int) -> dict[str, Callable[[], None]]:
    from devtools.avro_events import CLICK, registry_values
    from sink_engine.convert import avro_arrow
    from sink_engine.convert.confluent_avro_converter import ConfluentAvroConverter

    values = registry_values(records, registry.register("bench-avro-value", json.dumps(CLICK))["id"])

    def general() -> None:
        with hidden(avro_arrow, "polars", None):
            encode(ConfluentAvroConverter(client, SubjectNames("bench")), values, batch)

    def plain() -> None:
        parsed = fastavro.parse_schema(CLICK)
        rows = [fastavro.schemaless_reader(io.BytesIO(value[5:]), parsed, None) for value in values]
        pq.write_table(pa.Table.from_pylist(rows), io.BytesIO(), compression="snappy")

    return {
        "engine, columnar (polars Avro reader)": lambda: encode(
            ConfluentAvroConverter(client, SubjectNames("bench")), values, batch
        ),
        "engine, general (fastavro per datum)": general,
        "plain: fastavro + Table.from_pylist": plain,
    }


def protobuf_rows(registry, client, records: int, batch: int) -> dict[str, Callable[[], None]]:
    from devtools.protobuf_events import CLICK_PROTO, registry_values
    from sink_engine.convert import protobuf_arrow
    from sink_engine.convert.confluent_protobuf_converter import ConfluentProtobufConverter

    schema_id = registry.register("bench-protobuf-value", CLICK_PROTO, schema_type="PROTOBUF")["id"]
    values = registry_values(records, schema_id)

    def general() -> None:
        with hidden(protobuf_arrow, "ptars", None):
            encode(ConfluentProtobufConverter(client, SubjectNames("bench")), values, batch)

    return {
        "engine, columnar (ptars)": lambda: encode(
            ConfluentProtobufConverter(client, SubjectNames("bench")), values, batch
        ),
        "engine, general (upb per message)": general,
    }


def json_schema_rows(registry, client, records: int, batch: int) -> dict[str, Callable[[], None]]:
    from devtools.avro_events import click_event
    from devtools.json_schema_events import CLICK_JSON_SCHEMA, json_schema_values
    from sink_engine.convert import confluent_json_schema_converter
    from sink_engine.convert.confluent_json_schema_converter import ConfluentJsonSchemaConverter
    from sink_engine.convert.json_converter import SchemalessJsonConverter

    schema_id = registry.register("bench-json-schema-value", json.dumps(CLICK_JSON_SCHEMA), schema_type="JSON")["id"]
    values = json_schema_values(records, schema_id)
    plain = [orjson.dumps(click_event(i)) for i in range(records)]

    def general() -> None:  # the decoder is fetched, on the first value, while the reader is hidden
        with hidden(confluent_json_schema_converter, "arrow_reader", lambda schema: None):
            encode(ConfluentJsonSchemaConverter(client, SubjectNames("bench")), values, batch)

    return {
        "engine, columnar (pyarrow JSON reader)": lambda: encode(
            ConfluentJsonSchemaConverter(client, SubjectNames("bench")), values, batch
        ),
        "engine, general (connect_json per value)": general,
        "engine, same events as schemaless JSON": lambda: encode(SchemalessJsonConverter(False), plain, batch),
    }


ROWS = {"avro": avro_rows, "protobuf": protobuf_rows, "json-schema": json_schema_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--input", choices=(*INPUTS, "all"), default="all")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with SchemaRegistryServer() as registry:
        client = registry_client({"schema.registry.url": registry.url, "basic.auth.credentials.source": "url"})
        for name in INPUTS if args.input == "all" else (args.input,):
            rows = ROWS[name](registry, client, args.records, args.batch)
            print(f"{name + '+registry -> Parquet/snappy, one process':<48} {'records/s':>12} {'CPU µs/rec':>11}")
            for label, run in rows.items():
                seconds, cpu = measure(run, args.repeat)
                print(f"{label:<48} {args.records / seconds:>12,.0f} {cpu / args.records * 1e6:>11.2f}")


if __name__ == "__main__":
    main()
