"""Input converter throughput, in one process: schemaless JSON, JsonConverter envelopes, Confluent Schema
Registry Avro and Glue Schema Registry Avro, on the same click events (no Kafka, no S3: the converter alone,
which is the per-record step that differs between inputs). Prints a table. Usage:
    python -m devtools.bench_inputs [--records 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import json
import time
import uuid

import fastavro
import orjson

from devtools.producer import sample_event
from sink_engine.convert.confluent_avro_converter import ConfluentAvroConverter
from sink_engine.convert.confluent_registry import SubjectNames, registry_client
from sink_engine.convert.envelope_json_converter import EnvelopeJsonConverter
from sink_engine.convert.glue_converter import GlueSchemaRegistryConverter
from sink_engine.convert.json_converter import SchemalessJsonConverter
from sink_engine.records import RecordChunk
from tests.schema_registry_server import SchemaRegistryServer

AVRO = {
    "type": "record",
    "name": "Click",
    "fields": [
        {"name": "event_id", "type": "long"},
        {"name": "event_type", "type": "string"},
        {"name": "region", "type": "string"},
        {"name": "timestamp", "type": "long"},
        {"name": "user_id", "type": "string"},
    ],
}
CONNECT = {
    "type": "struct",
    "name": "Click",
    "version": 1,
    "fields": [
        {"field": "event_id", "type": "int64"},
        {"field": "event_type", "type": "string"},
        {"field": "region", "type": "string"},
        {"field": "timestamp", "type": "int64"},
        {"field": "user_id", "type": "string"},
    ],
}


class _StaticGlue:
    """Answers get_schema_version for one schema version (the converter fetches it once)."""

    def get_schema_version(self, SchemaVersionId):
        return {"SchemaDefinition": json.dumps(AVRO), "DataFormat": "AVRO", "VersionNumber": 1}


def avro_datum(event: dict) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(AVRO), event)
    return buffer.getvalue()


def inputs(events: list[dict], schema_id: int) -> dict:
    datums = [avro_datum(e) for e in events]
    version = uuid.uuid4().bytes
    return {
        "json (schemas.enable=false)": [orjson.dumps(e) for e in events],
        "json envelope (schemas.enable=true)": [orjson.dumps({"schema": CONNECT, "payload": e}) for e in events],
        "avro, Confluent registry": [b"\x00" + schema_id.to_bytes(4, "big") + d for d in datums],
        "avro, Glue registry": [b"\x03\x00" + version + d for d in datums],
    }


def measure(converter_of, values: list[bytes], repeat: int) -> tuple[float, int]:
    chunks = [
        RecordChunk("bench", 0, list(range(i, i + 10_000)), values[i : i + 10_000], keys=[], timestamps=[])
        for i in range(0, len(values), 10_000)
    ]
    best = float("inf")
    for _ in range(repeat):
        converter = converter_of()
        started = time.perf_counter()
        for chunk in chunks:
            converter.convert(chunk)
        best = min(best, time.perf_counter() - started)
    return best, sum(len(v) for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    events = [sample_event(i) for i in range(args.records)]
    with SchemaRegistryServer() as registry:
        schema_id = registry.register("bench-value", json.dumps(AVRO))["id"]
        client = registry_client({"schema.registry.url": registry.url, "basic.auth.credentials.source": "url"})
        converters = [
            SchemalessJsonConverter,
            EnvelopeJsonConverter,
            lambda: ConfluentAvroConverter(client, SubjectNames("bench")),
            lambda: GlueSchemaRegistryConverter(_StaticGlue()),
        ]
        print(f"{'input (converter only, best of ' + str(args.repeat) + ')':<44} {'records/s':>12} {'MB/s':>8}")
        for (name, values), converter_of in zip(inputs(events, schema_id).items(), converters):
            seconds, size = measure(converter_of, values, args.repeat)
            print(f"{name:<44} {args.records / seconds:>12,.0f} {size / seconds / 1e6:>8.1f}")


if __name__ == "__main__":
    main()
