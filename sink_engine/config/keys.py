"""The one place that declares every connector config key: its type, default, doc and validation.

Keys follow the Confluent S3 sink connector so that users can bring their connector JSON as it is.
Keys this engine adds are prefixed `sink.`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REQUIRED = object()  # default of a key that must be set


@dataclass(frozen=True)
class Key:
    """One config key. `kind` is one of: string, int, bool, list, choice, class."""

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    # for kind == "class": canonical short name -> accepted spellings (Confluent class names, short names)
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # for kind == "class": the canonical names built so far; others are a clear "not built yet" error
    built: tuple[str, ...] = ()


_S3 = "io.confluent.connect.s3"
_STORAGE = "io.confluent.connect.storage"

FORMAT_CLASSES = {
    "json": (f"{_S3}.format.json.JsonFormat", "JsonFormat", "json"),
    "parquet": (f"{_S3}.format.parquet.ParquetFormat", "ParquetFormat", "parquet"),
    "avro": (f"{_S3}.format.avro.AvroFormat", "AvroFormat", "avro"),
    "bytearray": (f"{_S3}.format.bytearray.ByteArrayFormat", "ByteArrayFormat", "bytearray"),
}
PARTITIONER_CLASSES = {
    "default": (f"{_STORAGE}.partitioner.DefaultPartitioner", "DefaultPartitioner", "default"),
    "field": (f"{_STORAGE}.partitioner.FieldPartitioner", "FieldPartitioner", "field"),
    "time": (f"{_STORAGE}.partitioner.TimeBasedPartitioner", "TimeBasedPartitioner", "time"),
    "daily": (f"{_STORAGE}.partitioner.DailyPartitioner", "DailyPartitioner", "daily"),
    "hourly": (f"{_STORAGE}.partitioner.HourlyPartitioner", "HourlyPartitioner", "hourly"),
}
CONVERTER_CLASSES = {
    "json": ("org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "json"),
    "string": ("org.apache.kafka.connect.storage.StringConverter", "StringConverter", "string"),
    "bytearray": ("org.apache.kafka.connect.converters.ByteArrayConverter", "ByteArrayConverter", "bytearray"),
    "avro": ("io.confluent.connect.avro.AvroConverter", "AvroConverter", "avro"),
    "glueavro": ("com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter", "AWSKafkaAvroConverter",
                 "glueavro"),
}
BUILT_CONVERTERS = ("json", "string", "bytearray", "avro", "glueavro")


def _converter_keys(role: str) -> tuple[Key, ...]:
    """The settings of the `<role>.converter` (role: value or key), named as the converters name them."""
    prefix = f"{role}.converter."
    return (
        Key(prefix + "schema.registry.url", "string", None,
            "AvroConverter: Confluent Schema Registry URL(s), comma-separated; user:password@ in the URL is allowed."),
        Key(prefix + "basic.auth.credentials.source", "choice", "url",
            "AvroConverter: where the registry's basic-auth credentials come from: URL or USER_INFO.",
            choices=("url", "user_info")),
        Key(prefix + "basic.auth.user.info", "string", None,
            "AvroConverter: user:password for the registry with credentials source USER_INFO."),
        Key(prefix + "region", "string", None,
            "AWSKafkaAvroConverter: region of the Glue Schema Registry (default: boto3's region)."),
        Key(prefix + "endpoint", "string", None, "AWSKafkaAvroConverter: Glue endpoint override."),
        Key(prefix + "registry.name", "string", None,
            "AWSKafkaAvroConverter: accepted for compatibility; reading needs only the schema version id in each record."),
    )


KEYS: tuple[Key, ...] = (
    Key("name", "string", REQUIRED, "Connector name; keys the offsets and the lease in DynamoDB."),
    Key("connector.class", "string", f"{_S3}.S3SinkConnector",
        "Accepted for compatibility; must name the S3 sink connector."),
    Key("topics", "list", None, "Comma-separated topics to sink. Exactly one of topics and topics.regex."),
    Key("topics.regex", "string", None, "Regular expression of topics to sink (full match)."),
    Key("bootstrap.servers", "list", REQUIRED, "Kafka bootstrap servers, host:port, comma-separated."),
    Key("tasks.max", "int", 1, "Cap on the Spark tasks that read topic-partitions in parallel.", minimum=1),
    Key("s3.bucket.name", "string", REQUIRED, "Bucket that receives the objects."),
    Key("s3.region", "string", "us-west-2", "Region of the bucket."),
    Key("store.url", "string", None,
        "S3 endpoint override; unset uses AWS_ENDPOINT_URL(_S3) or the regional endpoint."),
    Key("topics.dir", "string", "topics", "Top-level prefix of the object keys."),
    Key("directory.delim", "string", "/", "Delimiter between key path segments."),
    Key("file.delim", "string", "+", "Delimiter between topic, partition and start offset in file names."),
    Key("filename.offset.zero.pad.width", "int", 10, "Zero-padding width of the start offset in file names.",
        minimum=0),
    Key("flush.size", "int", REQUIRED,
        "Records per topic-partition after which its open files are closed and uploaded.", minimum=1),
    Key("format.class", "class", REQUIRED, "Output format.", classes=FORMAT_CLASSES, built=("json",)),
    Key("s3.compression.type", "choice", "none", "Compression of JSON output objects.", choices=("none", "gzip")),
    Key("s3.compression.level", "int", -1, "gzip level, -1 (default, 6) or 0-9.", minimum=-1, maximum=9),
    Key("partitioner.class", "class", f"{_STORAGE}.partitioner.DefaultPartitioner", "Partitioner of object keys.",
        classes=PARTITIONER_CLASSES, built=("default",)),
    Key("value.converter", "class", "org.apache.kafka.connect.json.JsonConverter", "Converter of record values.",
        classes=CONVERTER_CLASSES, built=BUILT_CONVERTERS),
    Key("value.converter.schemas.enable", "bool", True,
        "JsonConverter: values carry a {schema, payload} envelope (Kafka Connect's default, true)."),
    *_converter_keys("value"),
    Key("key.converter", "class", "org.apache.kafka.connect.storage.StringConverter",
        "Converter of record keys (used for the keys sidecar files, store.kafka.keys).", classes=CONVERTER_CLASSES,
        built=BUILT_CONVERTERS),
    Key("key.converter.schemas.enable", "bool", True,
        "JsonConverter for keys: keys carry a {schema, payload} envelope (Kafka Connect's default, true)."),
    *_converter_keys("key"),
    Key("schema.compatibility", "choice", "none",
        "Schema evolution within a topic-partition's open files: NONE rotates on any schema change; BACKWARD and "
        "FULL rotate on a newer schema version and project older records to the current schema; FORWARD rotates "
        "on an older version and projects newer records to the current schema.",
        choices=("none", "backward", "forward", "full")),
    Key("behavior.on.null.values", "choice", "fail", "What a record with a null value (tombstone) does.",
        choices=("fail", "ignore")),
    Key("errors.tolerance", "choice", "none", "none: a bad record fails the run, nothing past it is committed.",
        choices=("none",)),
    Key("offset.storage.dynamodb.table", "string", "sink-engine-offsets",
        "DynamoDB table of committed offsets and the run lease (keys pk, sk: strings)."),
    Key("sink.run.max.records.per.partition", "int", 1_000_000,
        "Per-run cap on records read from each topic-partition.", minimum=1),
    Key("sink.lease.duration.ms", "int", 120_000,
        "Lease time; a running job renews it every third of it, a crashed one's lease lapses after it.",
        minimum=1000),
    Key("sink.kafka.timeout.ms", "int", 60_000,
        "How long a task waits for Kafka to deliver planned records before it fails the run.", minimum=1000),
)

# Confluent keys that change what lands in S3 and are not built yet: setting them is an error, not a no-op.
NOT_BUILT_YET: dict[str, str] = {
    "rotate.interval.ms": "record-time rotation",
    "rotate.schedule.interval.ms": "scheduled rotation",
    "store.kafka.keys": "key sidecar files",
    "store.kafka.headers": "header sidecar files",
    "errors.deadletterqueue.topic.name": "the dead-letter queue",
    "partition.field.name": "the field partitioner",
    "path.format": "the time-based partitioner",
    "s3.ssea.name": "server-side encryption settings",
    "s3.object.tagging": "object tagging",
}
# Values of NOT_BUILT_YET keys that mean "feature off" and so are accepted.
OFF_VALUES = {"", "-1", "false", "none", "null"}

KEYS_BY_NAME = {k.name: k for k in KEYS}
PASSTHROUGH_PREFIXES = ("consumer.override.",)
