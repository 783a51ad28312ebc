"""The one place that declares every connector config key: its type, default, doc and validation.

Keys follow the Confluent S3 sink connector so that users can bring their connector JSON as it is.
Keys this engine adds are prefixed `sink.`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

REQUIRED = object()  # default of a key that must be set
DEFAULT_PART_SIZE = 25 * 1024 * 1024  # of s3.part.size, and of ObjectOptions and formats built without a config
# Confluent declares its integer keys as Java INT or LONG (ConfigDef.Type); a value past the type is refused there
JAVA_INT_MAX, JAVA_LONG_MAX, JAVA_SHORT_MAX = 2**31 - 1, 2**63 - 1, 2**15 - 1


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
    # kind == "int": unset `maximum` means Java's LONG range (Connect's type of the key when it is not INT)
    # for kind == "class": canonical short name -> accepted spellings (Confluent class names, short names)
    classes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # for kind == "class": the canonical names built so far; others are a clear "not built yet" error
    built: tuple[str, ...] = ()


_S3 = "io.confluent.connect.s3"
_STORAGE = "io.confluent.connect.storage"

FORMAT_CLASSES = {
    "json": (f"{_S3}.format.json.JsonFormat", "JsonFormat", "json"),
    "parquet": (f"{_S3}.format.parquet.ParquetFormat", "ParquetFormat", "parquet"),
    "avro": (f"{_S3}.format.avro.AvroFormat", "AvroFormat", "avro"),
    "bytearray": (f"{_S3}.format.bytearray.ByteArrayFormat", "ByteArrayFormat", "bytearray"),
    "blockgzip": ("BlockGzipFormat", "blockgzip"),
    # this engine's own: records appended to an Apache Iceberg table (iceberg.* keys, sink_engine/iceberg)
    "iceberg": ("IcebergFormat", "iceberg"),
    # this engine's own: each Kafka record whole (topic, partition, offset, timestamp, key, value, headers), a backup
    "envelope": ("EnvelopeFormat", "envelope"),
}
PARTITIONER_CLASSES = {
    "default": (f"{_STORAGE}.partitioner.DefaultPartitioner", "DefaultPartitioner", "default"),
    "field": (f"{_STORAGE}.partitioner.FieldPartitioner", "FieldPartitioner", "field"),
    "time": (f"{_STORAGE}.partitioner.TimeBasedPartitioner", "TimeBasedPartitioner", "time"),
    "daily": (f"{_STORAGE}.partitioner.DailyPartitioner", "DailyPartitioner", "daily"),
    "hourly": (f"{_STORAGE}.partitioner.HourlyPartitioner", "HourlyPartitioner", "hourly"),
    # this engine's own: field segments, then the time path (the Confluent connector has no such layout)
    "fieldtime": (
        "sink_engine.partition.FieldAndTimeBasedPartitioner",
        "FieldAndTimeBasedPartitioner",
        "fieldtime",
        f"{_STORAGE}.partitioner.FieldAndTimeBasedPartitioner",
    ),
}
CONVERTER_CLASSES = {
    "json": ("org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "json"),
    "string": ("org.apache.kafka.connect.storage.StringConverter", "StringConverter", "string"),
    "bytearray": ("org.apache.kafka.connect.converters.ByteArrayConverter", "ByteArrayConverter", "bytearray"),
    "avro": ("io.confluent.connect.avro.AvroConverter", "AvroConverter", "avro"),
    "glueavro": (
        "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter",
        "AWSKafkaAvroConverter",
        "glueavro",
    ),
    "protobuf": ("io.confluent.connect.protobuf.ProtobufConverter", "ProtobufConverter", "protobuf"),
    "jsonschema": ("io.confluent.connect.json.JsonSchemaConverter", "JsonSchemaConverter", "jsonschema"),
}
SIDECAR_FORMATS = ("json", "parquet", "avro", "bytearray")
BUILT_CONVERTERS = ("json", "string", "bytearray", "avro", "glueavro", "protobuf", "jsonschema")
REGISTRY_CONVERTERS = ("avro", "protobuf", "jsonschema")  # read through a Confluent Schema Registry
_SUBJECT = "io.confluent.kafka.serializers.subject"
# How the Schema Registry converters name the subject a writer schema's version is looked up under
# (convert/confluent_registry.py): <topic>-<role>, the record's full name, or <topic>-<record full name>.
SUBJECT_NAME_STRATEGIES = {
    "topic": (f"{_SUBJECT}.TopicNameStrategy", "TopicNameStrategy"),
    "record": (f"{_SUBJECT}.RecordNameStrategy", "RecordNameStrategy"),
    "topicrecord": (f"{_SUBJECT}.TopicRecordNameStrategy", "TopicRecordNameStrategy"),
}

_AWS_AUTH, _AWS_AUTH_V2 = "com.amazonaws.auth", "software.amazon.awssdk.auth.credentials"
# s3.credentials.provider.class: the Java SDK v1 and v2 spellings Confluent's connector versions accept
CREDENTIALS_PROVIDER_CLASSES = {
    "default": (
        f"{_AWS_AUTH}.DefaultAWSCredentialsProviderChain",
        "DefaultAWSCredentialsProviderChain",
        f"{_AWS_AUTH_V2}.DefaultCredentialsProvider",
        "DefaultCredentialsProvider",
    ),
    "environment": (
        f"{_AWS_AUTH}.EnvironmentVariableCredentialsProvider",
        "EnvironmentVariableCredentialsProvider",
        f"{_AWS_AUTH_V2}.EnvironmentVariableCredentialsProvider",
    ),
    "accesskey": (f"{_S3}.auth.AwsAccessKeyCredentialsProvider", "AwsAccessKeyCredentialsProvider"),
    "assumerole": (f"{_S3}.auth.AwsAssumeRoleCredentialsProvider", "AwsAssumeRoleCredentialsProvider"),
}

# Kafka client and AWS credentials at the top level of the connector JSON (see source/client_config.py).
CONNECTION_KEYS: tuple[Key, ...] = (
    Key(
        "security.protocol",
        "string",
        None,
        "Kafka client security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, "
        "SASL_SSL), as consumer.override.security.protocol; set one of the two.",
    ),
    Key(
        "sasl.mechanism",
        "string",
        None,
        "SASL mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, AWS_MSK_IAM, "
        "OAUTHBEARER), as consumer.override.sasl.mechanism; set one of the two.",
    ),
    Key(
        "sasl.jaas.config",
        "string",
        None,
        "JAAS login of the Java client, as consumer.override.sasl.jaas.config: "
        "PlainLoginModule and ScramLoginModule give the SASL username and password; MSK IAM's login modules MSK IAM "
        "auth; any other login module is an error.",
    ),
    Key(
        "aws.access.key.id",
        "string",
        None,
        "Static AWS access key id of the S3 client (with "
        "aws.secret.access.key); unset: boto3's credentials (the job's role). DynamoDB and Kafka are unaffected.",
    ),
    Key(
        "aws.secret.access.key",
        "string",
        None,
        "Static AWS secret key of the S3 client, with aws.access.key.id; use a ${secrets:...} or ${ssm:...} reference.",
    ),
    Key(
        "s3.credentials.provider.class",
        "class",
        "com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
        "How the S3 client signs (DynamoDB and Kafka keep the job's own credentials): "
        "DefaultAWSCredentialsProviderChain (boto3's chain, the job's role), EnvironmentVariableCredentialsProvider "
        "(AWS_ACCESS_KEY_ID or AWS_ACCESS_KEY, AWS_SECRET_KEY or AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN of each "
        "process), AwsAccessKeyCredentialsProvider (aws.access.key.id and aws.secret.access.key) or "
        "AwsAssumeRoleCredentialsProvider (s3.credentials.provider.sts.*). With the first two, aws.access.key.id and "
        "aws.secret.access.key, when set, are used instead, as the connector does.",
        classes=CREDENTIALS_PROVIDER_CLASSES,
        built=tuple(CREDENTIALS_PROVIDER_CLASSES),
    ),
    Key(
        "s3.credentials.provider.sts.role.arn",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the role the S3 "
        "client assumes (required); the deployed job role may assume exactly this role.",
    ),
    Key(
        "s3.credentials.provider.sts.role.session.name",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the "
        "session name of the assumed role (required, as the connector requires it).",
    ),
    Key(
        "s3.credentials.provider.sts.role.external.id",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the "
        "external id sent with AssumeRole (required, as the connector requires it).",
    ),
    Key(
        "s3.credentials.provider.sts.region",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: region of the STS "
        "endpoint (unset: AWS_REGION / AWS_DEFAULT_REGION, else s3.region).",
    ),
    Key(
        "s3.proxy.url",
        "string",
        None,
        "HTTP(S) proxy of the S3 client, http://host:port or https://host:port "
        "(user:password@ in it allowed); STS, DynamoDB and Kafka do not use it.",
    ),
    Key("s3.proxy.user", "string", None, "User of s3.proxy.url (instead of the URL's)."),
    Key(
        "s3.proxy.password",
        "string",
        None,
        "Password of s3.proxy.url (instead of the URL's); use a ${secrets:...} or ${ssm:...} reference.",
    ),
)
# Confluent Cloud's own keys, with connector.class S3_SINK (see config/cloud.py for what each one means here).
CLOUD_KEYS: tuple[Key, ...] = (
    Key(
        "input.data.format",
        "string",
        None,
        "Confluent Cloud: the value converter, one of AVRO, JSON_SR, PROTOBUF, "
        "JSON (schemaless), STRING, BYTES. Required with connector.class S3_SINK.",
    ),
    Key("input.key.format", "string", None, "Confluent Cloud: the key converter (the values of input.data.format)."),
    Key(
        "output.data.format",
        "string",
        None,
        "Confluent Cloud: the format, one of AVRO, JSON, PARQUET, BYTES. Required with connector.class S3_SINK.",
    ),
    Key("output.keys.format", "string", None, "Confluent Cloud: format of the keys files (store.kafka.keys)."),
    Key("output.headers.format", "string", None, "Confluent Cloud: format of the headers files (store.kafka.headers)."),
    Key(
        "compression.codec",
        "string",
        None,
        "Confluent Cloud: '<FORMAT> - <codec>' of output.data.format: "
        "AVRO - bzip2|deflate|snappy, BYTES - gzip, JSON - gzip, PARQUET - gzip|snappy, or '<FORMAT> - none'.",
    ),
    Key(
        "time.interval",
        "string",
        None,
        "Confluent Cloud: HOURLY or DAILY time buckets of the record's time "
        "(TimeBasedPartitioner). Required with connector.class S3_SINK unless partitioner.class is set.",
    ),
    Key(
        "kafka.auth.mode",
        "string",
        None,
        "Confluent Cloud: KAFKA_API_KEY (kafka.api.key and kafka.api.secret) or "
        "SERVICE_ACCOUNT (kafka.service.account.id): here the job's own Kafka identity (MSK IAM through its role, or "
        "the consumer.override.* security settings).",
    ),
    Key(
        "kafka.service.account.id",
        "string",
        None,
        "Confluent Cloud: the service account the connector reads Kafka "
        "as; here the job's own Kafka identity. Recorded, not used.",
    ),
    Key(
        "kafka.api.key",
        "string",
        None,
        "Confluent Cloud: Kafka API key, used as the SASL username (SCRAM-SHA-512 "
        "over SASL_SSL, as MSK's SASL/SCRAM; consumer.override.sasl.mechanism and .security.protocol change that).",
    ),
    Key(
        "kafka.api.secret",
        "string",
        None,
        "Confluent Cloud: Kafka API secret, the SASL password; use a ${secrets:...} or ${ssm:...} reference.",
    ),
    Key(
        "authentication.method",
        "string",
        None,
        "Confluent Cloud: Access Keys (aws.access.key.id and aws.secret.access.key) or IAM Roles (the job's own role).",
    ),
    Key(
        "provider.integration.id",
        "string",
        None,
        "Confluent Cloud: the IAM role of a provider integration. Here "
        "the S3 client uses the job's own role (boto3's default chain); the value is recorded, not used.",
    ),
    Key("schema.context.name", "string", None, "Confluent Cloud: Schema Registry context; only the default one."),
)


def _converter_keys(role: str) -> tuple[Key, ...]:
    """The settings of the `<role>.converter` (role: value or key), named as the converters name them."""
    prefix = f"{role}.converter."
    return (
        Key(
            prefix + "schema.registry.url",
            "string",
            None,
            "AvroConverter, ProtobufConverter, JsonSchemaConverter: Confluent Schema Registry URL(s), comma-separated; "
            "user:password@ in the URL is allowed.",
        ),
        Key(
            prefix + "basic.auth.credentials.source",
            "choice",
            "url",
            "Schema Registry converters: where the registry's basic-auth credentials come from: URL or USER_INFO.",
            choices=("url", "user_info"),
        ),
        Key(
            prefix + "basic.auth.user.info",
            "string",
            None,
            "Schema Registry converters: user:password for the registry with credentials source USER_INFO.",
        ),
        Key(
            f"{prefix}{role}.subject.name.strategy",
            "class",
            SUBJECT_NAME_STRATEGIES["topic"][0],
            f"Schema Registry converters: the subject under which a writer schema's version (schema.compatibility) "
            f"is looked up: TopicNameStrategy <topic>-{role}, RecordNameStrategy the record's full name (Avro record, "
            f"Protobuf message, JSON Schema title), TopicRecordNameStrategy <topic>-<full name>.",
            classes=SUBJECT_NAME_STRATEGIES,
            built=tuple(SUBJECT_NAME_STRATEGIES),
        ),
        Key(
            prefix + "wrapper.for.nullables",
            "bool",
            False,
            "ProtobufConverter: google.protobuf wrapper messages (Int32Value, ...) as their nullable primitive "
            "instead of a struct with one field value.",
        ),
        Key(
            prefix + "json.fail.invalid.schema",
            "bool",
            False,
            "JsonSchemaConverter: also validate each value against its writer schema (jsonschema); a value "
            "that does not validate is a bad record.",
        ),
        Key(
            prefix + "region",
            "string",
            None,
            "AWSKafkaAvroConverter: region of the Glue Schema Registry (default: boto3's region).",
        ),
        Key(prefix + "endpoint", "string", None, "AWSKafkaAvroConverter: Glue endpoint override."),
        Key(
            prefix + "registry.name",
            "string",
            None,
            "AWSKafkaAvroConverter: accepted for compatibility; reading needs only the schema version id in each record.",
        ),
    )


# IcebergFormat: named as the Iceberg Kafka Connect sink names them. Every `iceberg.catalog.*` key (these and
# any other, e.g. iceberg.catalog.s3.endpoint, iceberg.catalog.glue.id) is a pyiceberg catalog property.
ICEBERG_KEYS: tuple[Key, ...] = (
    Key(
        "iceberg.tables",
        "list",
        None,
        "IcebergFormat: the destination table, `namespace.table`; `${topic}` in it "
        "is replaced by each record's topic (lower case, characters other than a-z, 0-9 and _ as _), so that each "
        "topic gets its own table. Required with IcebergFormat.",
    ),
    Key(
        "iceberg.tables.auto-create-enabled",
        "bool",
        False,
        "IcebergFormat: create a missing table from the "
        "first records' schema, with the partition spec of partitioner.class (its namespace must exist).",
    ),
    Key(
        "iceberg.tables.evolve-schema-enabled",
        "bool",
        False,
        "IcebergFormat: a record field the table lacks "
        "adds an optional column, a wider type (int to long, float to double, a larger decimal precision) "
        "widens its column; without it such fields are dropped and narrower values are kept when they fit.",
    ),
    Key(
        "iceberg.tables.kafka-metadata-enabled",
        "bool",
        False,
        "IcebergFormat: add the optional columns "
        "_kafka_metadata_topic, _partition, _offset, _timestamp and _key (raw key bytes) to each row.",
    ),
    Key("iceberg.catalog", "string", "iceberg", "IcebergFormat: the catalog's name (pyiceberg's catalog name)."),
    Key(
        "iceberg.catalog.type",
        "choice",
        None,
        "IcebergFormat: sql (SQLAlchemy URI in iceberg.catalog.uri, e.g. "
        "a SQLite file; local stacks), glue (AWS Glue Data Catalog) or rest (an Iceberg REST catalog such as S3 "
        "Tables'). Required with IcebergFormat.",
        choices=("sql", "glue", "rest"),
    ),
    Key(
        "iceberg.catalog.uri",
        "string",
        None,
        "IcebergFormat: the catalog URI (sql: a SQLAlchemy URL; rest: the "
        "endpoint, by default S3 Tables' in the region of a table bucket ARN warehouse).",
    ),
    Key(
        "iceberg.catalog.warehouse",
        "string",
        None,
        "IcebergFormat: where new tables are located, "
        "s3://bucket/prefix (required with sql; with glue a table lies under its database's location, else here); "
        "rest: the catalog's warehouse, for S3 Tables the table bucket's ARN (which brings its SigV4 defaults).",
    ),
)

KEYS: tuple[Key, ...] = (
    Key("name", "string", REQUIRED, "Connector name; keys the offsets and the lease in DynamoDB."),
    Key(
        "connector.class",
        "string",
        f"{_S3}.S3SinkConnector",
        "Must name the S3 sink connector: io.confluent.connect.s3.S3SinkConnector, or S3_SINK (Confluent Cloud's, "
        "whose keys and defaults then apply).",
    ),
    Key("topics", "list", None, "Comma-separated topics to sink. Exactly one of topics and topics.regex."),
    Key("topics.regex", "string", None, "Regular expression of topics to sink (full match)."),
    Key("bootstrap.servers", "list", REQUIRED, "Kafka bootstrap servers, host:port, comma-separated."),
    *CONNECTION_KEYS,
    Key(
        "tasks.max",
        "int",
        1,
        "Cap on the Spark tasks that read topic-partitions in parallel.",
        minimum=1,
        maximum=JAVA_INT_MAX,
    ),
    Key("s3.bucket.name", "string", REQUIRED, "Bucket that receives the objects."),
    Key("s3.region", "string", "us-west-2", "Region of the bucket."),
    Key(
        "store.url", "string", None, "S3 endpoint override; unset uses AWS_ENDPOINT_URL(_S3) or the regional endpoint."
    ),
    Key("topics.dir", "string", "topics", "Top-level prefix of the object keys."),
    Key("directory.delim", "string", "/", "Delimiter between key path segments."),
    Key("file.delim", "string", "+", "Delimiter between topic, partition and start offset in file names."),
    Key(
        "filename.offset.zero.pad.width",
        "int",
        10,
        "Zero-padding width of the start offset in file names.",
        minimum=0,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "flush.size",
        "int",
        REQUIRED,
        "Records per topic-partition after which its open files are closed and uploaded.",
        minimum=1,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "format.class",
        "class",
        REQUIRED,
        "Output format.",
        classes=FORMAT_CLASSES,
        built=("json", "parquet", "avro", "bytearray", "blockgzip", "iceberg", "envelope"),
    ),
    Key(
        "s3.compression.type",
        "choice",
        "none",
        "Compression of JsonFormat and ByteArrayFormat objects (and EnvelopeFormat's json encoding).",
        choices=("none", "gzip"),
    ),
    Key(
        "json.decimal.format",
        "choice",
        "base64",
        "How JsonFormat and BlockGzipFormat write Decimal values of records "
        "with a schema: base64 (of the unscaled value, Connect's default) or numeric (a JSON number with the "
        "decimal's scale).",
        choices=("base64", "numeric"),
    ),
    Key(
        "s3.compression.level",
        "int",
        -1,
        "gzip level (JSON, ByteArray, Block-GZIP), -1 (default, 6) or 0-9.",
        minimum=-1,
        maximum=9,
    ),
    Key(
        "parquet.codec",
        "choice",
        "snappy",
        "ParquetFormat (and EnvelopeFormat's parquet) compression codec.",
        choices=("none", "snappy", "gzip", "lz4", "zstd", "brotli"),
    ),
    Key(
        "avro.codec",
        "choice",
        "null",
        "AvroFormat (and EnvelopeFormat's avro) compression codec.",
        choices=("null", "deflate", "snappy", "bzip2", "zstandard", "xz"),
    ),
    Key("format.bytearray.extension", "string", ".bin", "ByteArrayFormat file extension."),
    Key(
        "format.bytearray.separator",
        "string",
        "\\n",
        "ByteArrayFormat: written after every record; Java escapes (\\n, \\r, \\t, \\uXXXX) are unescaped.",
    ),
    Key(
        "format.blockgzip.block.size",
        "int",
        64 * 1024 * 1024,
        "BlockGzipFormat: uncompressed bytes after which the record that reaches them ends a gzip member.",
        minimum=1,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "format.envelope.encoding",
        "choice",
        "parquet",
        "EnvelopeFormat: how each record's envelope is written: "
        "parquet (.envelope<codec>.parquet, parquet.codec), avro (.envelope.avro, avro.codec) or json "
        "(.envelope.json, .envelope.json.gz with s3.compression.type=gzip; bytes as base64).",
        choices=("parquet", "avro", "json"),
    ),
    Key(
        "s3.ssea.name",
        "choice",
        "",
        "Server-side encryption of the objects: AES256 or aws:kms (unset: the bucket's default).",
        choices=("", "aes256", "aws:kms", "aws:kms:dsse"),
    ),
    Key(
        "s3.sse.kms.key.id",
        "string",
        None,
        "KMS key (id, alias or ARN) for s3.ssea.name=aws:kms; unset: the AWS managed key.",
    ),
    Key(
        "s3.acl.canned",
        "choice",
        None,
        "Canned ACL of the objects (unset: none sent).",
        choices=(
            "private",
            "public-read",
            "public-read-write",
            "authenticated-read",
            "aws-exec-read",
            "bucket-owner-read",
            "bucket-owner-full-control",
            "log-delivery-write",
        ),
    ),
    Key("s3.object.tagging", "bool", False, "Tag each data object with startOffset, endOffset and recordCount."),
    Key(
        "s3.part.size",
        "int",
        DEFAULT_PART_SIZE,
        "Objects larger than this go up as a multipart upload in parts "
        "of this size (bytes), sent while the file is written; also a Parquet row group's Kafka value bytes and the "
        "in-memory share of a schemaless-JSON Parquet/Avro file (the rest spills to local disk).",
        minimum=5 * 1024 * 1024,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "s3.part.retries",
        "int",
        3,
        "Retries of a failed S3 request (put, part, complete), 0 for none.",
        minimum=0,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "s3.retry.backoff.ms",
        "int",
        200,
        "Wait before the first retry; each next one may wait twice as long (full jitter, at most 20 s).",
        minimum=0,
    ),
    Key(
        "partitioner.class",
        "class",
        f"{_STORAGE}.partitioner.DefaultPartitioner",
        "Partitioner of object keys.",
        classes=PARTITIONER_CLASSES,
        built=("default", "field", "time", "daily", "hourly", "fieldtime"),
    ),
    Key(
        "partition.field.name",
        "list",
        None,
        "FieldPartitioner and FieldAndTimeBasedPartitioner: fields whose values name the key path segments "
        "(`<field>=<value>`, nested fields as a.b).",
    ),
    Key(
        "path.format",
        "string",
        "",
        "TimeBasedPartitioner and FieldAndTimeBasedPartitioner: Joda-Time pattern of the time path, e.g. "
        "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.",
    ),
    Key(
        "partition.duration.ms",
        "int",
        -1,
        "TimeBasedPartitioner and FieldAndTimeBasedPartitioner: length of a time bucket in milliseconds.",
    ),
    Key(
        "locale",
        "string",
        "en",
        "Time-based partitioners: locale of month and day names, read as Java's "
        "new Locale(value): a language (en, fr, de); a value Java has no data for (en_US, fr-FR, US) gives root "
        "names (Jan, Mon).",
    ),
    Key(
        "timezone",
        "string",
        "UTC",
        "Time-based partitioners and rotate.schedule.interval.ms: IANA zone id (Europe/Paris), UTC, or [+-]hh:mm.",
    ),
    Key(
        "timestamp.extractor",
        "choice",
        "wallclock",
        "Time of a record for time-based partitioners and rotate.interval.ms: Wallclock (the run's planned "
        "time), Record (Kafka timestamp) or RecordField (timestamp.field).",
        choices=("wallclock", "record", "recordfield"),
    ),
    Key(
        "timestamp.field",
        "string",
        "timestamp",
        "RecordField extractor: the value's field (nested as a.b) holding epoch ms or an ISO-8601 time.",
    ),
    Key(
        "partitioner.max.open.files",
        "int",
        1000,
        "Cap on the open files of a topic-partition; a record that would open one more first closes them all "
        "(0: no cap).",
        minimum=0,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "rotate.interval.ms",
        "int",
        -1,
        "Close the open files when a record's time (timestamp.extractor Record or RecordField) is this far past "
        "the first open record's (-1: off).",
        minimum=-1,
    ),
    Key(
        "rotate.schedule.interval.ms",
        "int",
        -1,
        "Wall-clock rotation: a run that starts after the next interval boundary (aligned to midnight in "
        "timezone) past a partition's last commit closes all its files at the end of its range (-1: off).",
        minimum=-1,
    ),
    Key(
        "rotate.file.on.partition.change",
        "bool",
        False,
        "Close the open files when a record's encoded partition differs from the previous record's.",
    ),
    Key(
        "value.converter",
        "class",
        "org.apache.kafka.connect.json.JsonConverter",
        "Converter of record values.",
        classes=CONVERTER_CLASSES,
        built=BUILT_CONVERTERS,
    ),
    Key(
        "value.converter.schemas.enable",
        "bool",
        True,
        "JsonConverter: values carry a {schema, payload} envelope (Kafka Connect's default, true).",
    ),
    *_converter_keys("value"),
    Key(
        "key.converter",
        "class",
        "org.apache.kafka.connect.storage.StringConverter",
        "Converter of record keys (used for the keys sidecar files, store.kafka.keys).",
        classes=CONVERTER_CLASSES,
        built=BUILT_CONVERTERS,
    ),
    Key(
        "key.converter.schemas.enable",
        "bool",
        True,
        "JsonConverter for keys: keys carry a {schema, payload} envelope (Kafka Connect's default, true).",
    ),
    *_converter_keys("key"),
    Key(
        "schema.compatibility",
        "choice",
        "none",
        "Schema evolution within a topic-partition's open files: NONE rotates on any schema change (with "
        "sink.schema.files=rotate; by default each schema has its own files); BACKWARD and "
        "FULL rotate on a newer schema version and project older records to the current schema; FORWARD rotates "
        "on an older version and projects newer records to the current schema.",
        choices=("none", "backward", "forward", "full"),
    ),
    Key(
        "sink.schema.files",
        "choice",
        "separate",
        "With schema.compatibility=NONE: separate gives each schema of a topic-partition's struct values its own "
        "open files, each rotating on its own flush.size, so a schema change closes no file; rotate closes every "
        "open file at each schema change, as the Confluent connector does (its file boundaries).",
        choices=("separate", "rotate"),
    ),
    Key(
        "store.kafka.keys",
        "bool",
        False,
        "Write the record keys of each data object to <stem>.keys<ext> beside it (key.converter, keys.format.class).",
    ),
    Key(
        "store.kafka.headers",
        "bool",
        False,
        "Write the record headers of each data object to <stem>.headers<ext> beside it (headers.format.class).",
    ),
    Key(
        "keys.format.class",
        "class",
        f"{_S3}.format.avro.AvroFormat",
        "Format of the keys sidecar objects.",
        classes=FORMAT_CLASSES,
        built=SIDECAR_FORMATS,
    ),
    Key(
        "headers.format.class",
        "class",
        f"{_S3}.format.avro.AvroFormat",
        "Format of the headers sidecar objects.",
        classes=FORMAT_CLASSES,
        built=SIDECAR_FORMATS,
    ),
    Key(
        "transforms",
        "list",
        (),
        "Aliases of the single message transforms applied to each record, in order "
        "(transforms.<alias>.type and options; README: Single message transforms).",
    ),
    Key(
        "predicates",
        "list",
        (),
        "Aliases of the predicates transforms name in transforms.<alias>.predicate "
        "(predicates.<alias>.type and options).",
    ),
    Key(
        "behavior.on.null.values",
        "choice",
        "fail",
        "What a record with a null value (tombstone) does: fail, "
        "ignore, or write (into files under tombstone.encoded.partition).",
        choices=("fail", "ignore", "write"),
    ),
    Key(
        "tombstone.encoded.partition",
        "string",
        "tombstone",
        "Encoded partition (key path segment) of tombstones with behavior.on.null.values=write.",
    ),
    Key(
        "errors.tolerance",
        "choice",
        "none",
        "none: a bad record fails the run, nothing past it is committed; all: it goes to the dead-letter queue "
        "(or is skipped when none is set) and the run goes on.",
        choices=("none", "all"),
    ),
    Key(
        "errors.deadletterqueue.topic.name",
        "string",
        "",
        "Kafka topic that receives bad records with errors.tolerance=all (created when missing).",
    ),
    Key(
        "errors.deadletterqueue.topic.replication.factor",
        "int",
        3,
        "Replication factor of the dead-letter topic when the sink creates it; at most the cluster's brokers.",
        minimum=1,
        maximum=JAVA_SHORT_MAX,
    ),
    Key(
        "errors.deadletterqueue.context.headers.enable",
        "bool",
        False,
        "Add Kafka Connect's __connect.errors.* context headers to dead-letter topic records.",
    ),
    Key(
        "errors.deadletterqueue.s3.prefix",
        "string",
        "",
        "Prefix in s3.bucket.name that receives bad records as JSON lines (instead of a topic).",
    ),
    Key("errors.log.enable", "bool", False, "Log each bad record (RECORD_FAILED: topic, partition, offset, error)."),
    Key(
        "errors.log.include.messages",
        "bool",
        False,
        "With errors.log.enable: include the record's key, value and headers (base64) in the log.",
    ),
    *ICEBERG_KEYS,
    Key(
        "offset.storage.dynamodb.table",
        "string",
        "sink-engine-offsets",
        "DynamoDB table of committed offsets and the run lease (keys pk, sk: strings).",
    ),
    Key(
        "sink.run.max.records.per.partition",
        "int",
        1_000_000,
        "Per-run cap on records read from each topic-partition.",
        minimum=1,
    ),
    Key(
        "sink.lease.duration.ms",
        "int",
        120_000,
        "Lease time; a running job renews it every third of it, a crashed one's lease lapses after it.",
        minimum=1000,
    ),
    Key(
        "sink.run.timeout.ms",
        "int",
        3_600_000,
        "Time bound of a run from its start: its ranges then stop and commit what their closed files hold; a task "
        "that does not stop within a grace (a quarter of it, 1 to 60 s) has its Spark job cancelled, nothing is "
        "committed and the lease is released. 0: no bound.",
        minimum=0,
    ),
    Key(
        "sink.kafka.timeout.ms",
        "int",
        60_000,
        "How long a task waits for Kafka to deliver planned records before it fails the run.",
        minimum=1000,
    ),
    *CLOUD_KEYS,
)

# Confluent keys that change what lands in S3 and are not built yet: setting them is an error, not a no-op.
NOT_BUILT_YET: dict[str, str] = {
    "s3.sse.key": "customer-provided encryption keys (SSE-C)",
    "iceberg.tables.dynamic-enabled": "routing records to tables named by a field",
    "iceberg.tables.route-field": "routing records to tables by a field",
    "iceberg.tables.default-id-columns": "upserts (equality deletes by id columns)",
    "iceberg.tables.upsert-mode-enabled": "upserts (equality deletes by id columns)",
    "iceberg.tables.cdc-field": "change-data-capture operations",
    "iceberg.tables.default-partition-by": "a partition spec other than partitioner.class's",
}
# Values of NOT_BUILT_YET keys that mean "feature off" and so are accepted.
OFF_VALUES = {"", "-1", "false", "none", "null"}

KEYS_BY_NAME = {k.name: k for k in KEYS}
# Keys under these prefixes are passed on (Kafka client settings, pyiceberg catalog properties, table properties
# of auto-created tables, the options of transforms and predicates: sink_engine/transform/settings.py); declared
# keys under them are parsed as declared. Each with its doc, as a Key's (the configuration reference's rows).
PASSTHROUGH_DOCS: dict[str, str] = {
    "consumer.override.": "Kafka client settings, passed to the Kafka client (librdkafka) under the same name.",
    "iceberg.catalog.": "IcebergFormat: every other iceberg.catalog.* key is a pyiceberg catalog property.",
    "iceberg.tables.auto-create-props.": "IcebergFormat: table properties of an auto-created table.",
    "transforms.": "transforms.<alias>.type names a transform's class; the alias's other keys are its options.",
    "predicates.": "predicates.<alias>.type names a predicate's class; the alias's other keys are its options.",
}
PASSTHROUGH_PREFIXES = tuple(PASSTHROUGH_DOCS)
