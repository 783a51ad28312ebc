"""Registry Avro to Parquet/snappy in one process, no Kafka or S3: the converter and the format alone, on the click
events of devtools/avro_events.py. Rows: the engine's columnar path (convert/avro_arrow.py), its general path
(fastavro per datum, Table.from_pylist; polars hidden), and the plain code of the issue (strip the header,
fastavro.schemaless_reader, Table.from_pylist, Parquet). Prints records/s and CPU µs per record. Usage:
    python -m devtools.bench_avro [--records 200000] [--batch 10000] [--repeat 3]
Needs the dev dependencies (tests.schema_registry_server).
"""
from __future__ import annotations

import argparse
import io
import json
import time

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from devtools.avro_events import CLICK, registry_values
from sink_engine.convert import avro_arrow
from sink_engine.convert.confluent_avro_converter import ConfluentAvroConverter
from sink_engine.convert.confluent_registry import SubjectNames, registry_client
from sink_engine.format.base import FileContext
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import RecordChunk
from tests.schema_registry_server import SchemaRegistryServer


def engine(client, values: list, batch: int, columnar: bool) -> None:
    """Convert batch by batch, then one Parquet file of all the batches (as a file of flush.size records)."""
    saved = avro_arrow.polars
    if not columnar:
        avro_arrow.polars = None
    try:
        converter = ConfluentAvroConverter(client, SubjectNames("bench"))
        out = io.BytesIO()
        encoder = ParquetFormat("snappy").open(FileContext("bench", 0, 0), out)
        for start in range(0, len(values), batch):
            chunk = RecordChunk("bench", 0, list(range(start, start + batch)), values[start:start + batch],
                                keys=[], timestamps=[])
            column = converter.convert(chunk)
            encoder.write(encoder.prepare(column, chunk.offsets), [len(v) for v in chunk.values])
        encoder.finish()
    finally:
        avro_arrow.polars = saved


def plain(values: list) -> None:
    parsed = fastavro.parse_schema(CLICK)
    rows = [fastavro.schemaless_reader(io.BytesIO(value[5:]), parsed, None) for value in values]
    pq.write_table(pa.Table.from_pylist(rows), io.BytesIO(), compression="snappy")


def measure(run, repeat: int) -> tuple[float, float]:
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        run()
        best = min(best, (time.perf_counter() - started, time.process_time() - cpu))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with SchemaRegistryServer() as registry:
        schema_id = registry.register("bench-value", json.dumps(CLICK))["id"]
        client = registry_client({"schema.registry.url": registry.url, "basic.auth.credentials.source": "url"})
        values = registry_values(args.records, schema_id)
        rows = {"engine, columnar (polars Avro reader)": lambda: engine(client, values, args.batch, True),
                "engine, general (fastavro per datum)": lambda: engine(client, values, args.batch, False),
                "plain: fastavro + Table.from_pylist": lambda: plain(values)}
        print(f"{'Avro+registry -> Parquet/snappy, one process':<44} {'records/s':>12} {'CPU µs/rec':>11}")
        for name, run in rows.items():
            seconds, cpu = measure(run, args.repeat)
            print(f"{name:<44} {args.records / seconds:>12,.0f} {cpu / args.records * 1e6:>11.2f}")


if __name__ == "__main__":
    main()
