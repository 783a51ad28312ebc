"""Registry Protobuf to Parquet/snappy in one process, no Kafka or S3: the converter and the format alone, on the click
events of devtools/protobuf_events.py. Rows: the engine's columnar path (ptars, convert/protobuf_arrow.py) and its
general path (upb per message, Connect values, Table.from_pylist; ptars hidden). Prints records/s and CPU µs per
record. Usage:
    python -m devtools.bench_protobuf [--records 200000] [--batch 10000] [--repeat 3]
Needs the dev dependencies (tests.schema_registry_server, protoc).
"""
from __future__ import annotations

import argparse
import io

from devtools.bench_avro import measure
from devtools.protobuf_events import CLICK_PROTO, registry_values
from sink_engine.convert import protobuf_arrow
from sink_engine.convert.confluent_protobuf_converter import ConfluentProtobufConverter
from sink_engine.convert.confluent_registry import SubjectNames, registry_client
from sink_engine.format.base import FileContext
from sink_engine.format.parquet_format import ParquetFormat
from sink_engine.records import RecordChunk
from tests.schema_registry_server import SchemaRegistryServer


def engine(client, values: list, batch: int, columnar: bool) -> None:
    """Convert batch by batch, then one Parquet file of all the batches (as a file of flush.size records)."""
    saved = protobuf_arrow.ptars
    if not columnar:
        protobuf_arrow.ptars = None
    try:
        converter = ConfluentProtobufConverter(client, SubjectNames("bench"))
        encoder = ParquetFormat("snappy").open(FileContext("bench", 0, 0), io.BytesIO())
        for start in range(0, len(values), batch):
            chunk = RecordChunk("bench", 0, list(range(start, start + batch)), values[start:start + batch],
                                keys=[], timestamps=[])
            encoder.write(encoder.prepare(converter.convert(chunk), chunk.offsets), [len(v) for v in chunk.values])
        encoder.finish()
    finally:
        protobuf_arrow.ptars = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with SchemaRegistryServer() as registry:
        schema_id = registry.register("bench-value", CLICK_PROTO, schema_type="PROTOBUF")["id"]
        client = registry_client({"schema.registry.url": registry.url, "basic.auth.credentials.source": "url"})
        values = registry_values(args.records, schema_id)
        rows = {"engine, columnar (ptars)": lambda: engine(client, values, args.batch, True),
                "engine, general (upb per message)": lambda: engine(client, values, args.batch, False)}
        print(f"{'Protobuf+registry -> Parquet/snappy, one process':<48} {'records/s':>12} {'CPU µs/rec':>11}")
        for name, run in rows.items():
            seconds, cpu = measure(run, args.repeat)
            print(f"{name:<48} {args.records / seconds:>12,.0f} {cpu / args.records * 1e6:>11.2f}")


if __name__ == "__main__":
    main()
