"""Partitioner throughput and open-file memory, in one process against moto's server (no Kafka, no Spark).

Throughput: synthetic JSON records of about 200 bytes through convert, partition, rotate, encode and
upload, per partitioner. Memory: a field partitioner over a high-cardinality field (each record opens a
file, flush.size never reached), with and without `partitioner.max.open.files`; tracemalloc's peak of
Python allocations while writing. Prints tables. Usage:
    python -m devtools.partition_bench [--records 200000] [--repeat 3] [--memory-records 30000]
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import boto3
import orjson

from devtools.producer import sample_event
from devtools.stack import LocalStack
from sink_engine.config import parse_config
from sink_engine.convert import ConverterSettings, converter_for
from sink_engine.format import FormatSettings, format_for
from sink_engine.partition import PartitionSettings, partitioner_for
from sink_engine.partition.timestamps import extractor_for
from sink_engine.records import RecordChunk
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.uploader import Uploader
from sink_engine.target.s3_objects.writer import TopicPartitionWriter
from sink_engine.task.settings import rotation_policy

BUCKET, CHUNK = "partition-bench", 10_000
PARTITIONERS: dict[str, dict] = {
    "DefaultPartitioner": {},
    "FieldPartitioner (region, 3 values)": {"partitioner.class": "FieldPartitioner", "partition.field.name": "region"},
    "FieldPartitioner (user_id, 997 values)": {
        "partitioner.class": "FieldPartitioner",
        "partition.field.name": "user_id",
    },
    "HourlyPartitioner (RecordField, UTC)": {
        "partitioner.class": "HourlyPartitioner",
        "timestamp.extractor": "RecordField",
    },
    "TimeBased 15 min (Record, Europe/Paris)": {
        "partitioner.class": "TimeBasedPartitioner",
        "path.format": "'dt'=yyyy-MM-dd/'t'=HHmm",
        "partition.duration.ms": 900_000,
        "timezone": "Europe/Paris",
        "timestamp.extractor": "Record",
    },
    "FieldAndTime (region + daily, RecordField)": {
        "partitioner.class": "FieldAndTimeBasedPartitioner",
        "partition.field.name": "region",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
        "partition.duration.ms": 86_400_000,
        "timestamp.extractor": "RecordField",
    },
}


def config_for(settings: dict, flush_size: int):
    return parse_config(
        {
            "name": "partition-bench",
            "config": {
                "topics": "bench",
                "bootstrap.servers": "127.0.0.1:9",
                "s3.bucket.name": BUCKET,
                "s3.region": "us-east-1",
                "flush.size": flush_size,
                "format.class": "JsonFormat",
                "value.converter.schemas.enable": "false",
                **settings,
            },
        }
    )


def chunks(records: int, distinct: int | None = None) -> list[RecordChunk]:
    """Records at offsets 0.., Kafka timestamps one second apart; `distinct` sets how many user_id values."""
    out = []
    for start in range(0, records, CHUNK):
        events = [sample_event(i, padding=95) for i in range(start, min(records, start + CHUNK))]
        if distinct:
            for e in events:
                e["user_id"] = f"user-{e['event_id'] % distinct}"
        values = [orjson.dumps(e) for e in events]
        out.append(
            RecordChunk(
                "bench",
                0,
                [e["event_id"] for e in events],
                values,
                keys=[None] * len(values),
                timestamps=[e["timestamp"] for e in events],
            )
        )
    return out


def write_all(config, data: list[RecordChunk], s3) -> tuple[float, int, int]:
    """Seconds to convert, partition, rotate, encode and upload every chunk; files closed; bytes traced
    (tracemalloc, when on) while the last records are still in open files, before the final close."""
    uploader = Uploader(s3, BUCKET)
    partitioning = PartitionSettings.from_config(config)
    extractor = extractor_for(partitioning, 0)
    writer = TopicPartitionWriter(
        "bench",
        0,
        0,
        format_for(FormatSettings.from_config(config)),
        ObjectNaming.from_config(config),
        rotation_policy(config).with_extractor(extractor),
        uploader,
    )
    converter = converter_for(ConverterSettings.from_config(config), "bench")
    partitioner = partitioner_for(partitioning, extractor)
    started = time.perf_counter()
    for chunk in data:
        values = converter.convert(chunk)
        writer.write(chunk, values, partitioner.encode(chunk, values))
    uploader.drain()
    held = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
    writer.close_all(data[-1].offsets[-1] + 1)
    uploader.drain()
    uploader.close()
    return time.perf_counter() - started, len(writer.closed), held


def throughput_rows(args, s3) -> list[str]:
    data = chunks(args.records)
    rows = []
    for name, settings in PARTITIONERS.items():
        runs = [write_all(config_for(settings, 50_000), data, s3)[:2] for _ in range(args.repeat)]
        seconds = sorted(r[0] for r in runs)
        rate = f"{args.records / seconds[-1]:,.0f}-{args.records / seconds[0]:,.0f}"
        rows.append(f"| {name:<44} | {seconds[0]:>6.2f}-{seconds[-1]:<6.2f} | {rate:>19} | {runs[0][1]:>6} |")
    return rows


def memory_rows(args, s3) -> list[str]:
    rows = []
    for distinct in (1_000, args.memory_records):
        data = chunks(args.memory_records, distinct)
        for cap in (0, 1000):
            settings = {
                "partitioner.class": "FieldPartitioner",
                "partition.field.name": "user_id",
                "partitioner.max.open.files": cap,
            }
            gc.collect()
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            seconds, files, held = write_all(config_for(settings, args.memory_records + 1), data, s3)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rows.append(
                f"| {distinct:>8,} | {cap or 'none':>9} | {files:>7,} | {(held - base) / 1e6:>12.1f} | "
                f"{(peak - base) / 1e6:>10.1f} | {seconds:>7.2f} |"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--memory-records",
        type=int,
        default=30_000,
        help="records of the memory runs (each distinct value ends as one uploaded file)",
    )
    args = parser.parse_args()
    with LocalStack() as stack:
        stack.apply_env()
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        throughput = throughput_rows(args, s3)
        memory = memory_rows(args, s3)
    print(f"\n{args.records:,} JSON records of about 200 bytes, flush.size 50,000, one process, {args.repeat} runs")
    print("| partitioner                                  | seconds       |           records/s | files  |")
    print("|----------------------------------------------|---------------|---------------------|--------|")
    print("\n".join(throughput))
    print(
        f"\nOpen-file memory: FieldPartitioner over user_id, {args.memory_records:,} records, flush.size never reached"
    )
    print("| distinct | max files | files   | held MB (*)  | peak MB    | seconds |")
    print("|----------|-----------|---------|--------------|------------|---------|")
    print("\n".join(memory))
    print(
        "(*) held by the writer before its final close: the open files' records and their bookkeeping; "
        "peak includes encoding and upload buffers"
    )


if __name__ == "__main__":
    main()
