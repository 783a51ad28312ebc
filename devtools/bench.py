"""`make bench`: the run phase of `sink-engine run` (Kafka -> S3, offsets committed, on local Spark) beside a
plain one-process pipeline in the same run (devtools/plain_pipeline.py), for JSON and Parquet output, and the run
phase with IcebergFormat (records/s beside Parquet files, and the time of its snapshot commit); the run phase of
Avro values through a Schema Registry (AvroConverter, the click events of devtools/avro_events.py) to Parquet
beside the plain Avro pipeline and beside the same events as schemaless JSON, and the same events as Protobuf
through the registry (ProtobufConverter, devtools/protobuf_events.py) and as JSON Schema values
(JsonSchemaConverter, devtools/json_schema_events.py) to Parquet; CPU per record of the engine's
process tree; scaling from tasks.max 1 to 2; the run phase over the same small input spread over 16 and over 256
partitions (what a partition costs on its own, issue 22); then every output format and partitioner through one
range at a time in one process (the engine's task code without Spark).

Prints tables. Spark start-up is measured apart from the run. Usage:
    python -m devtools.bench [--records 2000000] [--partitions 4] [--flush-size 50000] [--formats none] [--no-iceberg]
                             [--partition-counts 16,256|none] [--no-avro] [--no-protobuf] [--no-json-schema]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from dataclasses import dataclass

import boto3
import orjson

from devtools import plain_pipeline
from devtools.process_cpu import TreeCpu
from devtools.producer import create_topic, produce_events
from devtools.stack import LocalStack
from sink_engine.config import parse_config
from sink_engine.driver.job import run_job
from sink_engine.driver.session import plan
from sink_engine.offsets import OffsetStore
from sink_engine.target.s3_objects.output import run_range
from sink_engine.task.settings import TaskSettings

BUCKET, TABLE, TOPIC = "bench-lake", "bench-offsets", "bench-events"


# Output formats measured one by one (single process, same input): name -> connector keys.
FORMAT_MATRIX: dict[str, dict] = {
    "json": {},
    "json/gzip": {"s3.compression.type": "gzip"},
    **{
        f"parquet/{c}": {"format.class": "ParquetFormat", "parquet.codec": c}
        for c in ("snappy", "none", "gzip", "lz4", "zstd", "brotli")
    },
    **{
        f"avro/{c}": {"format.class": "AvroFormat", "avro.codec": c}
        for c in ("null", "deflate", "snappy", "bzip2", "zstandard", "xz")
    },
    "bytearray": {"format.class": "ByteArrayFormat"},
    "blockgzip": {"format.class": "BlockGzipFormat"},
}
# Partitioners measured the same way (JSON output): name -> connector keys. Events are 1 s apart.
PARTITIONER_MATRIX: dict[str, dict] = {
    "field/region": {"partitioner.class": "FieldPartitioner", "partition.field.name": "region"},
    "field/user_id": {"partitioner.class": "FieldPartitioner", "partition.field.name": "user_id"},
    "hourly/recordfield": {"partitioner.class": "HourlyPartitioner", "timestamp.extractor": "RecordField"},
    "time-15min-paris/record": {
        "partitioner.class": "TimeBasedPartitioner",
        "timezone": "Europe/Paris",
        "path.format": "'dt'=yyyy-MM-dd/'t'=HHmm",
        "partition.duration.ms": 900_000,
        "timestamp.extractor": "Record",
    },
    "field+daily/recordfield": {
        "partitioner.class": "FieldAndTimeBasedPartitioner",
        "partition.field.name": "region",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd",
        "partition.duration.ms": 86_400_000,
        "timestamp.extractor": "RecordField",
    },
}


def bench_config(stack: LocalStack, args, name: str, topics_dir: str, overrides: dict | None = None):
    return parse_config(
        {
            "name": name,
            "config": {
                "topics": TOPIC,
                "bootstrap.servers": stack.bootstrap_servers,
                "s3.bucket.name": BUCKET,
                "s3.region": "us-east-1",
                "topics.dir": topics_dir,
                "flush.size": args.flush_size,
                "format.class": "JsonFormat",
                "value.converter": "JsonConverter",
                "value.converter.schemas.enable": "false",
                "offset.storage.dynamodb.table": TABLE,
                "tasks.max": args.partitions,
                "sink.run.max.records.per.partition": args.records,
                **(overrides or {}),
            },
        }
    )


def one_process_run(config, dynamodb) -> tuple[float, int, int]:
    """The same per-range work, one range after another in this process: seconds, records, output bytes."""
    started = time.perf_counter()
    ranges, _ = plan(config, OffsetStore(dynamodb, TABLE, lambda: 0))
    s3 = boto3.client("s3")
    settings = TaskSettings.from_config(config)
    results = [run_range(settings, r, client=s3) for r in ranges]
    failed = [r.error for r in results if r.error]
    if failed:
        raise RuntimeError(f"one-process run failed: {failed}")
    files = [f for r in results for f in r.files]
    return time.perf_counter() - started, sum(f.record_count for f in files), sum(f.size_bytes for f in files)


def format_rows(stack: LocalStack, args, dynamodb, total_mb: float, what: str = "format") -> list[str]:
    """One single-process row per entry of FORMAT_MATRIX in `--formats` (what="format") or of
    PARTITIONER_MATRIX in `--partitioners` (what="partitioner"), on the same input."""
    matrix, selected = (FORMAT_MATRIX, args.formats) if what == "format" else (PARTITIONER_MATRIX, args.partitioners)
    rows = []
    for name in [n for n in matrix if selected == "all" or n in selected.split(",")]:
        _empty_bucket()
        print(f"{what} {name}: one process, no Spark ...", flush=True)
        slug = "".join(c if c.isalnum() else "-" for c in name)
        config = bench_config(stack, args, f"{what}-{slug}", f"{what}s", matrix[name])
        cpu_started = time.process_time()
        seconds, records, output = one_process_run(config, dynamodb)
        cpu = time.process_time() - cpu_started
        rows.append(f"{row(name, seconds, records, total_mb)} {output / 1e6:>9.1f} | {records / cpu:>11,.0f} |")
    return rows


def row(name: str, seconds: float, records: int, mbytes: float) -> str:
    return f"| {name:<44} | {seconds:>8.2f} | {records:>10,} | {records / seconds:>12,.0f} | {mbytes / seconds:>7.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--flush-size", type=int, default=50_000)
    parser.add_argument(
        "--formats", default="all", help="comma-separated names from FORMAT_MATRIX to measure, 'all' or 'none'"
    )
    parser.add_argument(
        "--partitioners",
        default="all",
        help="comma-separated names from PARTITIONER_MATRIX to measure, 'all' or 'none'",
    )
    parser.add_argument(
        "--partition-counts",
        default="16,256",
        help="partition counts of the partition-count rows (25,600 records, flush.size 50, tasks.max 4), or 'none'",
    )
    parser.add_argument(
        "--no-avro",
        dest="avro",
        action="store_false",
        help="skip the Avro+registry rows (AvroConverter to Parquet, the plain Avro pipeline)",
    )
    parser.add_argument(
        "--no-protobuf",
        dest="protobuf",
        action="store_false",
        help="skip the Protobuf+registry row (ProtobufConverter to Parquet)",
    )
    parser.add_argument(
        "--no-json-schema",
        dest="json_schema",
        action="store_false",
        help="skip the JSON Schema+registry row (JsonSchemaConverter to Parquet)",
    )
    parser.add_argument(
        "--no-iceberg",
        dest="iceberg",
        action="store_false",
        help="skip the IcebergFormat run (SQL catalog, warehouse in the S3 emulator)",
    )
    parser.add_argument(
        "--master",
        default=None,
        help="Spark master of the engine's runs: default local[*,4] (tasks in the driver's JVM); "
        "local-cluster[2,1,1024] runs two executor JVMs as separate processes, as EMR does",
    )
    args = parser.parse_args()
    with LocalStack() as stack:
        stack.apply_env()
        cpu = TreeCpu.without_children_so_far()  # the broker and moto left out
        dynamodb = stack.create_store(BUCKET, TABLE)
        create_topic(stack.bootstrap_servers, TOPIC, args.partitions)
        print(f"producing {args.records:,} events of about 220 bytes to {args.partitions} partitions ...", flush=True)
        produce_events(stack.bootstrap_servers, TOPIC, args.records, args.partitions, padding=95)
        total_mb = _input_megabytes(bench_config(stack, args, "probe", "probe"), dynamodb)

        print("starting Spark ...", flush=True)
        started, cpu_before = time.perf_counter(), cpu.sample()
        from sink_engine.run.spark_runner import spark_session, warm_up

        spark = spark_session("sink-engine-bench", args.master)
        warm_up(spark, args.partitions, ICEBERG_IMPORTS if args.iceberg else ())
        startup = (time.perf_counter() - started, sum(TreeCpu.spent(cpu_before, cpu.sample()).values()))
        runs = run_phase_rows(stack, args, dynamodb, spark, cpu)
        avro = avro_rows(stack, args, dynamodb, spark, cpu) if args.avro else None
        protobuf = protobuf_row(stack, args, dynamodb, spark, cpu) if args.protobuf else None
        json_schema = (
            json_schema_rows(stack, args, dynamodb, spark, cpu, avro[-1] if avro else None)
            if args.json_schema
            else None
        )
        iceberg = iceberg_row(stack, args, dynamodb, spark, cpu) if args.iceberg else None
        scaling = scaling_rows(stack, args, dynamodb, spark, cpu)
        counts = partition_count_rows(stack, dynamodb, spark, cpu, args.partition_counts)
        spark.stop()
        formats = format_rows(stack, args, dynamodb, total_mb)
        partitioners = format_rows(stack, args, dynamodb, total_mb, "partitioner")

    print()
    print(
        f"{args.records:,} records in {args.partitions} partitions, {total_mb:.0f} MB of values, "
        f"flush.size {args.flush_size:,}, {_cores()} cores (the broker and the S3 emulator share them), Spark "
        f"master {args.master or 'local[*,4]'}"
    )
    print(
        "\nRun phase against a plain one-process pipeline (devtools/plain_pipeline.py) on the same input. CPU counts "
        "the engine's whole process tree (driver, JVM, Python workers); the plain pipeline is one process."
    )
    print(f"| {'format':<15} | {'pipeline':<34} | seconds |  records/s | CPU µs/rec | JVM µs/rec |")
    print(f"|{'-' * 17}|{'-' * 36}|---------|------------|------------|------------|")
    print("\n".join(row.line() for row in runs))
    for name in dict.fromkeys(row.format for row in runs):
        plain, engine = [row for row in runs if row.format == name]
        print(
            f"{name}: run phase {engine.records_per_s / plain.records_per_s:.2f}x the plain pipeline (target 0.9x); "
            f"CPU per record {engine.cpu_us / plain.cpu_us:.2f}x (target at most 1.5x)"
        )
    if avro:
        print("\nAvro through a Schema Registry (AvroConverter) to Parquet/snappy; the same events as schemaless JSON")
        print("\n".join(row.line() for row in avro))
        plain, engine, as_json = avro
        print(
            f"avro+registry: run phase {engine.records_per_s / plain.records_per_s:.2f}x the plain Avro pipeline "
            f"(target at least 2x); CPU per record {engine.cpu_us / as_json.cpu_us:.2f}x the same events as "
            f"schemaless JSON (target at most 1x)"
        )
    if protobuf:
        print(protobuf.line())
        against = f"{protobuf.cpu_us / avro[2].cpu_us:.2f}x the" if avro else "(no row with --no-avro) against the"
        print(f"protobuf+registry: CPU per record {against} same events as schemaless JSON (target at most 1.5x)")
    if json_schema:
        print_json_schema_rows(json_schema)
    if iceberg:
        row_, commit_seconds = iceberg
        parquet = next(r for r in runs if r.format == "parquet/snappy" and r.pipeline.startswith("sink-engine"))
        print(row_.line())
        print(
            f"iceberg: run phase {row_.records_per_s / parquet.records_per_s:.2f}x Parquet/snappy files; one "
            f"snapshot commit (lease check, load, append) {commit_seconds:.3f} s"
        )
    imports = "imports, pyiceberg's too" if args.iceberg else "imports"
    print(
        f"Spark start-up (session, {args.partitions} Python workers, {imports}): {startup[0]:.1f} s, "
        f"{startup[1]:.1f} CPU s"
    )
    print("\nScaling, JSON, the same input")
    print("\n".join(row.line() for row in scaling))
    print(f"tasks.max 2 / tasks.max 1: {scaling[1].records_per_s / scaling[0].records_per_s:.2f}x")
    if counts:
        print(
            f"\nPartition count: {COUNT_RECORDS:,} JSON records, flush.size {COUNT_FLUSH}, tasks.max 4, spread over "
            "each count of partitions (run phase: plan, write, commit)"
        )
        print("\n".join(row.line() for row in counts))
        print(
            f"{counts[-1].pipeline} / {counts[0].pipeline}: {counts[-1].seconds / counts[0].seconds:.2f}x the "
            "seconds (target at most 2x)"
        )
    if formats:
        print(
            "\nOutput formats, single process (consume, convert, encode, put; MB/s of input values; the last "
            "column counts this process's CPU time only, not the broker's or the S3 emulator's)"
        )
        print(f"| {'format':<44} |  seconds |    records |    records/s |    MB/s | output MB | rec/CPU s   |")
        print(f"|{'-' * 46}|----------|------------|--------------|---------|-----------|-------------|")
        print("\n".join(formats))
    if partitioners:
        print("\nPartitioners, single process, JSON output (consume, convert, partition, encode, put)")
        print(f"| {'partitioner':<44} |  seconds |    records |    records/s |    MB/s | output MB | rec/CPU s   |")
        print(f"|{'-' * 46}|----------|------------|--------------|---------|-----------|-------------|")
        print("\n".join(partitioners))


@dataclass
class RunRow:
    format: str
    pipeline: str
    seconds: float
    records: int
    cpu: dict

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds

    @property
    def cpu_us(self) -> float:
        return sum(self.cpu.values()) / self.records * 1e6

    def line(self) -> str:
        jvm = f"{self.cpu['java'] / self.records * 1e6:>10.2f}" if "java" in self.cpu else f"{'':>10}"
        return (
            f"| {self.format:<15} | {self.pipeline:<34} | {self.seconds:>7.2f} | {self.records_per_s:>10,.0f} "
            f"| {self.cpu_us:>10.2f} | {jvm} |"
        )


RUN_FORMATS = {"json": {}, "parquet/snappy": {"format.class": "ParquetFormat", "parquet.codec": "snappy"}}


def run_phase_rows(stack: LocalStack, args, dynamodb, spark, cpu: TreeCpu) -> list[RunRow]:
    """Per format: the plain pipeline, then `run` of the engine (Spark started already), each on an empty bucket."""
    rows = []
    for name, overrides in RUN_FORMATS.items():
        _empty_bucket()
        print(f"{name}: plain pipeline ...", flush=True)
        started, cpu_started = time.perf_counter(), time.process_time()
        plain = plain_pipeline.run(
            stack.bootstrap_servers, TOPIC, args.partitions, BUCKET, "plain", name, args.flush_size
        )
        rows.append(
            RunRow(
                name,
                "plain: 1 process",
                time.perf_counter() - started,
                plain.records,
                {"python": time.process_time() - cpu_started},
            )
        )
        _empty_bucket()
        rows.append(_engine_row(stack, args, dynamodb, spark, cpu, name, overrides, args.partitions))
    return rows


AVRO_TOPIC, AVRO_JSON_TOPIC = "bench-avro", "bench-avro-json"


def avro_rows(stack: LocalStack, args, dynamodb, spark, cpu: TreeCpu) -> list[RunRow]:
    """The plain Avro pipeline, `run` with AvroConverter to Parquet/snappy, and `run` of the same events as
    schemaless JSON to Parquet/snappy (each on an empty bucket)."""
    from devtools.avro_events import CLICK, click_event, registry_values
    from devtools.producer import produce
    from tests.schema_registry_server import SchemaRegistryServer

    parquet = {"format.class": "ParquetFormat", "parquet.codec": "snappy"}
    with SchemaRegistryServer() as registry:
        schema_id = registry.register(f"{AVRO_TOPIC}-value", json.dumps(CLICK))["id"]
        print(f"producing {args.records:,} Avro click events (and the same as JSON) ...", flush=True)
        for topic in (AVRO_TOPIC, AVRO_JSON_TOPIC):
            create_topic(stack.bootstrap_servers, topic, args.partitions)
        produce(stack.bootstrap_servers, AVRO_TOPIC, registry_values(args.records, schema_id), args.partitions)
        produce(
            stack.bootstrap_servers,
            AVRO_JSON_TOPIC,
            (orjson.dumps(click_event(i)) for i in range(args.records)),
            args.partitions,
        )
        _empty_bucket()
        print("avro+registry: plain pipeline ...", flush=True)
        started, cpu_started = time.perf_counter(), time.process_time()
        plain = plain_pipeline.run(
            stack.bootstrap_servers,
            AVRO_TOPIC,
            args.partitions,
            BUCKET,
            "plain",
            "avro+registry/parquet",
            args.flush_size,
        )
        rows = [
            RunRow(
                "avro+registry",
                "plain: 1 process",
                time.perf_counter() - started,
                plain.records,
                {"python": time.process_time() - cpu_started},
            )
        ]
        avro = {
            **parquet,
            "topics": AVRO_TOPIC,
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry.url,
        }
        rows.append(_engine_row(stack, args, dynamodb, spark, cpu, "avro+registry", avro, args.partitions))
    as_json = {**parquet, "topics": AVRO_JSON_TOPIC}
    rows.append(_engine_row(stack, args, dynamodb, spark, cpu, "same as json", as_json, args.partitions))
    return rows


PROTOBUF_TOPIC = "bench-protobuf"


def protobuf_row(stack: LocalStack, args, dynamodb, spark, cpu: TreeCpu) -> RunRow:
    """`run` with ProtobufConverter to Parquet/snappy on the click events as Protobuf (devtools/protobuf_events.py);
    the same events as schemaless JSON are avro_rows' last row."""
    from devtools.producer import produce
    from devtools.protobuf_events import CLICK_PROTO, registry_values
    from tests.schema_registry_server import SchemaRegistryServer

    with SchemaRegistryServer() as registry:
        schema_id = registry.register(f"{PROTOBUF_TOPIC}-value", CLICK_PROTO, schema_type="PROTOBUF")["id"]
        print(f"producing {args.records:,} Protobuf click events ...", flush=True)
        create_topic(stack.bootstrap_servers, PROTOBUF_TOPIC, args.partitions)
        produce(stack.bootstrap_servers, PROTOBUF_TOPIC, registry_values(args.records, schema_id), args.partitions)
        protobuf = {
            "format.class": "ParquetFormat",
            "parquet.codec": "snappy",
            "topics": PROTOBUF_TOPIC,
            "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
            "value.converter.schema.registry.url": registry.url,
        }
        return _engine_row(stack, args, dynamodb, spark, cpu, "protobuf+registry", protobuf, args.partitions)


JSON_SCHEMA_TOPIC = "bench-jsonschema"


def json_schema_rows(stack: LocalStack, args, dynamodb, spark, cpu: TreeCpu, as_json: RunRow | None) -> list[RunRow]:
    """`run` with JsonSchemaConverter to Parquet/snappy on the click events as JSON Schema values
    (devtools/json_schema_events.py), then the same events as schemaless JSON: `as_json` (the Avro rows' run of
    them), or a run of its own when the Avro rows were skipped."""
    from devtools.avro_events import click_event
    from devtools.json_schema_events import CLICK_JSON_SCHEMA, json_schema_values
    from devtools.producer import produce
    from tests.schema_registry_server import SchemaRegistryServer

    parquet = {"format.class": "ParquetFormat", "parquet.codec": "snappy"}
    with SchemaRegistryServer() as registry:
        schema_id = registry.register(f"{JSON_SCHEMA_TOPIC}-value", json.dumps(CLICK_JSON_SCHEMA), schema_type="JSON")[
            "id"
        ]
        print(f"producing {args.records:,} JSON Schema click events ...", flush=True)
        create_topic(stack.bootstrap_servers, JSON_SCHEMA_TOPIC, args.partitions)
        produce(
            stack.bootstrap_servers, JSON_SCHEMA_TOPIC, json_schema_values(args.records, schema_id), args.partitions
        )
        overrides = {
            **parquet,
            "topics": JSON_SCHEMA_TOPIC,
            "value.converter": "io.confluent.connect.json.JsonSchemaConverter",
            "value.converter.schema.registry.url": registry.url,
        }
        rows = [_engine_row(stack, args, dynamodb, spark, cpu, "jsonschema+reg", overrides, args.partitions)]
    if as_json is None:
        create_topic(stack.bootstrap_servers, AVRO_JSON_TOPIC, args.partitions)
        produce(
            stack.bootstrap_servers,
            AVRO_JSON_TOPIC,
            (orjson.dumps(click_event(i)) for i in range(args.records)),
            args.partitions,
        )
        as_json = _engine_row(
            stack, args, dynamodb, spark, cpu, "same as json", {**parquet, "topics": AVRO_JSON_TOPIC}, args.partitions
        )
    return rows + [as_json]


def print_json_schema_rows(rows: list[RunRow]) -> None:
    engine, as_json = rows
    print(
        "\nJSON Schema through a Schema Registry (JsonSchemaConverter) to Parquet/snappy; the same events as "
        "schemaless JSON"
    )
    print("\n".join(row.line() for row in rows))
    print(
        f"jsonschema+reg: CPU per record {engine.cpu_us / as_json.cpu_us:.2f}x the same events as schemaless "
        f"JSON (target at most 1.5x); run phase {engine.records_per_s / as_json.records_per_s:.2f}x its records/s"
    )


def scaling_rows(stack: LocalStack, args, dynamodb, spark, cpu: TreeCpu) -> list[RunRow]:
    return [_engine_row(stack, args, dynamodb, spark, cpu, "json", {}, tasks) for tasks in (1, 2)]


COUNT_RECORDS, COUNT_FLUSH = 25_600, 50


def partition_count_rows(stack: LocalStack, dynamodb, spark, cpu: TreeCpu, counts: str) -> list[RunRow]:
    """The run phase over COUNT_RECORDS records in a topic of each partition count (`16,256`), same records, flush.size
    COUNT_FLUSH, tasks.max 4: what every partition costs beyond its records (its range, its commit)."""
    rows = []
    for partitions in [] if counts == "none" else [int(n) for n in counts.split(",")]:
        _empty_bucket()
        topic = f"{TOPIC}-{partitions}p"
        create_topic(stack.bootstrap_servers, topic, partitions)
        produce_events(stack.bootstrap_servers, topic, COUNT_RECORDS, partitions, padding=95)
        print(f"json: sink-engine run over {partitions} partitions ...", flush=True)
        args = argparse.Namespace(flush_size=COUNT_FLUSH, partitions=4, records=COUNT_RECORDS)
        config = bench_config(stack, args, f"run-{partitions}p", "counts", {"topics": topic})
        before = cpu.sample()
        summary = run_job(config, spark, dynamodb)
        rows.append(
            RunRow(
                "json",
                f"{partitions} partitions, tasks.max=4",
                summary.seconds,
                summary.records_written,
                TreeCpu.spent(before, cpu.sample()),
            )
        )
    return rows


def _engine_row(stack, args, dynamodb, spark, cpu: TreeCpu, name: str, overrides: dict, tasks: int) -> RunRow:
    _empty_bucket()
    print(f"{name}: sink-engine run, tasks.max={tasks} ...", flush=True)
    slug = "".join(c if c.isalnum() else "-" for c in name)
    config = bench_config(stack, args, f"run-{slug}-{tasks}", "topics", {**overrides, "tasks.max": tasks})
    before = cpu.sample()
    summary = run_job(config, spark, dynamodb)
    return RunRow(
        name,
        f"sink-engine run: Spark, tasks.max={tasks}",
        summary.seconds,
        summary.records_written,
        TreeCpu.spent(before, cpu.sample()),
    )


# What the Iceberg row's tasks import beyond the engine (pyiceberg, its SQL catalog and SQLAlchemy: 0.45 CPU s in
# each Python worker), imported by the warm-up as the object formats' imports are, not inside the row's run phase.
ICEBERG_IMPORTS = ("sink_engine.target.iceberg_tables.task", "pyiceberg.catalog.sql")


def iceberg_row(stack, args, dynamodb, spark, cpu: TreeCpu) -> tuple[RunRow, float]:
    """`sink-engine run` with IcebergFormat (Parquet/snappy data files, a SQL catalog in a temporary SQLite file,
    the warehouse in the bench bucket): its row, and the seconds of its snapshot commit (SNAPSHOT_COMMITTED)."""
    from sink_engine.target.iceberg_tables.catalog import ensure_namespace, open_catalog
    from sink_engine.target.iceberg_tables.settings import IcebergSettings

    _empty_bucket()
    print(f"iceberg: sink-engine run, tasks.max={args.partitions} ...", flush=True)
    catalog_dir = tempfile.mkdtemp(prefix="bench-catalog-")
    config = bench_config(
        stack,
        args,
        "run-iceberg",
        "topics",
        {
            "format.class": "IcebergFormat",
            "iceberg.tables": "bench.events",
            "iceberg.catalog.type": "sql",
            "iceberg.catalog.uri": f"sqlite:///{catalog_dir}/catalog.db",
            "iceberg.catalog.warehouse": f"s3://{BUCKET}/warehouse",
            "iceberg.tables.auto-create-enabled": "true",
            "iceberg.tables.auto-create-props.write.parquet.compression-codec": "snappy",
        },
    )
    ensure_namespace(open_catalog(IcebergSettings.from_config(config)), "bench.events")
    commits = EventLog("SNAPSHOT_COMMITTED")
    before = cpu.sample()
    with commits:
        summary = run_job(config, spark, dynamodb)
    row_ = RunRow(
        "iceberg",
        f"sink-engine run: Spark, tasks.max={args.partitions}",
        summary.seconds,
        summary.records_written,
        TreeCpu.spent(before, cpu.sample()),
    )
    return row_, sum(event["seconds"] for event in commits.events)


class EventLog(logging.Handler):
    """Collects one structured event of the `sink_engine` logger while in its `with` block."""

    def __init__(self, name: str):
        super().__init__(logging.INFO)
        self.name_ = name
        self.events: list[dict] = []
        self._logger = logging.getLogger("sink_engine")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event = json.loads(record.getMessage())
        except ValueError:  # not a structured event
            return
        if isinstance(event, dict) and event.get("event") == self.name_:
            self.events.append(event)

    def __enter__(self):
        self._level = self._logger.level
        self._logger.addHandler(self)
        self._logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)


def _input_megabytes(config, dynamodb) -> float:
    """Size of the records' values, from the broker's own accounting of a full read."""
    from sink_engine.source.reader import read_range
    from sink_engine.source.settings import SourceSettings

    total = 0
    source = SourceSettings.from_config(config)
    for planned in plan(config, OffsetStore(dynamodb, TABLE, lambda: 0))[0]:
        for chunk in read_range(source, planned):
            total += sum(len(v) for v in chunk.values)
    return total / 1e6


def _empty_bucket() -> None:
    """Delete what a step wrote, so that every step starts with the same (empty) S3 emulator."""
    s3 = boto3.client("s3")
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            s3.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})


def _cores() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
