"""Memory of one large open file, per format: the extra resident memory (peak RSS over the RSS before any
record) of writing one file of `--megabytes` of Kafka values with `s3.part.size` 5 MiB, against moto's server;
and of one task holding 1,000 open Parquet files (a FieldPartitioner over a field with 1,000 values, the same
bytes in all); and of the same records as one range into an unpartitioned Iceberg table (a SQL catalog, the
warehouse in the emulator), whose data file is written a row group at a time.

Each row runs in its own process, so that one row's peak does not hide the next. The first row converts the
same records without writing them: the floor that the input itself costs (one chunk of records at a time).
The Arrow column is the peak of pyarrow's memory pool, part of the RSS figure.
Prints a table. Usage:
    python -m devtools.memory_bench [--megabytes 200] [--record-bytes 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

MIB = 1024 * 1024
BUCKET, CHUNK = "memory-bench", 5_000
OPEN_FILES = 1_000  # the open-files row: a FieldPartitioner over `k`, which takes this many values
ROWS = {  # name -> (connector keys, values with a schema envelope)
    "input only (convert, no file)": (None, False),
    "json": ({"format.class": "JsonFormat"}, False),
    "json/gzip": ({"format.class": "JsonFormat", "s3.compression.type": "gzip"}, False),
    "blockgzip (64 MiB blocks)": ({"format.class": "BlockGzipFormat"}, False),
    "parquet/snappy, schemaless JSON": ({"format.class": "ParquetFormat"}, False),
    "parquet/snappy, JSON with schema": ({"format.class": "ParquetFormat"}, True),
    "avro/deflate, schemaless JSON": ({"format.class": "AvroFormat", "avro.codec": "deflate"}, False),
    "avro/deflate, JSON with schema": ({"format.class": "AvroFormat", "avro.codec": "deflate"}, True),
    f"parquet/snappy, {OPEN_FILES:,} open files": (
        {"format.class": "ParquetFormat", "partitioner.class": "FieldPartitioner", "partition.field.name": "k"},
        False,
    ),
    "iceberg, schemaless JSON": (
        {
            "format.class": "IcebergFormat",
            "iceberg.tables": "bench.memory",
            "iceberg.catalog.type": "sql",
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse",
        },
        False,
    ),
}
_SCHEMA = {
    "type": "struct",
    "name": "Event",
    "optional": False,
    "fields": [
        {"field": "n", "type": "int64", "optional": False},
        {"field": "blob", "type": "string", "optional": False},
    ],
}


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _values(first: int, count: int, record_bytes: int, envelope: bool, keyed: bool = False) -> list[bytes]:
    """JSON records of about `record_bytes`; `keyed` adds the field `k` (n modulo OPEN_FILES) first."""
    out = []
    for n in range(first, first + count):
        payload: dict[str, object] = {"k": n % OPEN_FILES} if keyed else {}
        payload.update({"n": n, "blob": os.urandom(record_bytes // 2).hex()[: record_bytes - 20]})
        out.append(json.dumps({"schema": _SCHEMA, "payload": payload} if envelope else payload).encode())
    return out


def run_row(name: str, megabytes: int, record_bytes: int) -> dict:
    """In a child process: write one file of the row's format; peak extra RSS, object size and seconds."""
    import boto3
    import pyarrow as pa

    from sink_engine.config import parse_config
    from sink_engine.convert import ConverterSettings, converter_for
    from sink_engine.format import FormatSettings, format_for
    from sink_engine.partition import PartitionSettings, partitioner_for
    from sink_engine.partition.timestamps import extractor_for
    from sink_engine.records import RecordChunk
    from sink_engine.storage.naming import ObjectNaming
    from sink_engine.storage.object_options import ObjectOptions
    from sink_engine.storage.uploader import Uploader
    from sink_engine.target.s3_objects.writer import TopicPartitionWriter
    from sink_engine.task.settings import rotation_policy

    settings, envelope = ROWS[name]
    records = megabytes * 1_000_000 // record_bytes
    config = parse_config(
        {
            "name": "memory-bench",
            "config": {
                "topics": "bench",
                "bootstrap.servers": "127.0.0.1:9",
                "s3.bucket.name": BUCKET,
                "s3.region": "us-east-1",
                "flush.size": records + 1,
                "s3.part.size": 5 * MIB,
                "value.converter": "JsonConverter",
                "value.converter.schemas.enable": str(envelope).lower(),
                "topics.dir": f"m{os.getpid()}",
                **(settings or {"format.class": "JsonFormat"}),
                **_catalog(settings),
            },
        }
    )
    s3 = boto3.client("s3")
    converter = converter_for(ConverterSettings.from_config(config), "bench")
    keyed = "partitioner.class" in (settings or {})
    partitioning = PartitionSettings.from_config(config)
    partitioner = partitioner_for(partitioning, extractor_for(partitioning, 0))
    uploader = Uploader(s3, BUCKET, ObjectOptions.from_config(config))
    formats = FormatSettings.from_config(config)
    tables = formats.format_class == "iceberg"
    if tables:
        writer = _table_writer(config)
    else:
        writer = TopicPartitionWriter(
            "bench",
            0,
            0,
            format_for(formats),
            ObjectNaming.from_config(config),
            rotation_policy(config).with_extractor(extractor_for(partitioning, 0)),
            uploader,
        )
    before, started = _rss_bytes(), time.perf_counter()
    for first in range(0, records, CHUNK):
        values = _values(first, min(CHUNK, records - first), record_bytes, envelope, keyed)
        chunk = RecordChunk(
            "bench",
            0,
            list(range(first, first + len(values))),
            values,
            keys=[None] * len(values),
            timestamps=[0] * len(values),
        )
        converted = converter.convert(chunk)
        if settings is not None:
            writer.write(chunk, converted, partitioner.encode(chunk, converted))
    if tables:
        writer.finish()
    elif settings is not None:
        writer.close_all(records)
    uploader.drain()
    uploader.close()
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    size = sum(f.size_bytes for f in writer.closed)
    return {
        "extra_mb": (peak - before) / 1e6,
        "arrow_mb": pa.default_memory_pool().max_memory() / 1e6,
        "object_mb": size / 1e6,
        "seconds": seconds,
        "records": records,
        "files": len(writer.closed),
    }


def _catalog(settings: dict | None) -> dict:
    """The Iceberg row's SQL catalog: a SQLite file of this process (its warehouse is in the bench bucket)."""
    import tempfile

    if (settings or {}).get("format.class") != "IcebergFormat":
        return {}
    return {"iceberg.catalog.uri": f"sqlite:///{tempfile.mkdtemp(prefix='memory-bench-')}/catalog.db"}


def _table_writer(config):
    """The Iceberg row's writer, of a table it auto-creates (unpartitioned)."""
    from sink_engine.target.iceberg_tables.catalog import ensure_namespace, open_catalog
    from sink_engine.target.iceberg_tables.settings import IcebergSettings
    from sink_engine.target.iceberg_tables.table_writer import TableWriter

    settings = IcebergSettings.from_config(config)
    assert settings.table_template is not None  # one table, not fan-out
    ensure_namespace(open_catalog(settings), settings.table_template)
    return TableWriter(settings, "bench", 0, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200, help="Kafka value bytes in the file (MB)")
    parser.add_argument("--record-bytes", type=int, default=1000)
    parser.add_argument("--row", help=argparse.SUPPRESS)  # internal: run one row in this process
    args = parser.parse_args()
    if args.row:
        print(json.dumps(run_row(args.row, args.megabytes, args.record_bytes)))
        return
    import boto3

    from devtools.stack import LocalStack

    with LocalStack() as stack:
        stack.apply_env()
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        results = {}
        for name in ROWS:
            answer = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--row",
                    name,
                    "--megabytes",
                    str(args.megabytes),
                    "--record-bytes",
                    str(args.record_bytes),
                ],
                capture_output=True,
                text=True,
                env={**os.environ, **stack.env},
                check=True,
            )
            results[name] = json.loads(answer.stdout.strip().splitlines()[-1])
    print(
        f"\nOne open file of {args.megabytes} MB of Kafka values ({args.record_bytes}-byte JSON records), "
        "s3.part.size 5 MiB, one process per row"
    )
    print(
        "| format                            | files | object MB | extra RSS MB (peak) | of it Arrow's pool | seconds |"
    )
    print(
        "|-----------------------------------|-------|-----------|---------------------|--------------------|---------|"
    )
    for name, r in results.items():
        print(
            f"| {name:<33} | {r.get('files', 0):>5,} | {r['object_mb']:>9.1f} | {r['extra_mb']:>19.1f} | "
            f"{r['arrow_mb']:>18.1f} | {r['seconds']:>7.1f} |"
        )


if __name__ == "__main__":
    main()
