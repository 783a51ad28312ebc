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
S3_SINK_CLASS = f"{_S3}.S3SinkConnector"

FORMAT_CLASSES = {
    "json": (f"{_S3}.format.json.JsonFormat", "JsonFormat", "json"),
    "parquet": (f"{_S3}.format.parquet.ParquetFormat", "ParquetFormat", "parquet"),
    "avro": (f"{_S3}.format.avro.AvroFormat", "AvroFormat", "avro"),
    "bytearray": (f"{_S3}.format.bytearray.ByteArrayFormat", "ByteArrayFormat", "bytearray"),
    "blockgzip": ("BlockGzipFormat", "blockgzip"),
    # this engine's own: records appended to an Apache Iceberg table (iceberg.* keys, sink_engine/target/iceberg_tables)
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
        "Kafka client security protocol (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`). At the top level, the "
        "same as `consumer.override.security.protocol`: set one of the two (different values are an error).",
    ),
    Key(
        "sasl.mechanism",
        "string",
        None,
        "SASL mechanism (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`, `AWS_MSK_IAM`, `OAUTHBEARER`). At the top level, "
        "the same as `consumer.override.sasl.mechanism`: set one of the two (different values are an error).",
    ),
    Key(
        "sasl.jaas.config",
        "string",
        None,
        "JAAS login of the Java client. At the top level, the same as `consumer.override.sasl.jaas.config`: set one "
        "of the two (different values are an error). `PlainLoginModule` and `ScramLoginModule` give the SASL username "
        "and password; MSK IAM's login modules MSK IAM authentication; any other login module is an error (see [Kafka "
        "authentication](configuration/kafka-authentication.md)).",
    ),
    Key(
        "aws.access.key.id",
        "string",
        None,
        "Static AWS access key id of the S3 client, with `aws.secret.access.key`; unset: boto3's credentials (the "
        "job's role). DynamoDB and Kafka are unaffected. One of the two without the other is ignored and reported "
        "(the default chain is used, as Confluent's connector does), except with `AwsAccessKeyCredentialsProvider` "
        "and in Confluent Cloud configs, where both are required.",
    ),
    Key(
        "aws.secret.access.key",
        "string",
        None,
        "Static AWS secret key of the S3 client, with `aws.access.key.id`, as a `${secrets:...}` or `${ssm:...}` "
        "reference (see [Secrets](configuration/secrets.md)). One of the two without the other is ignored and "
        "reported (the default chain is used, as Confluent's connector does), except with "
        "`AwsAccessKeyCredentialsProvider` and in Confluent Cloud configs, where both are required.",
    ),
    Key(
        "s3.credentials.provider.class",
        "class",
        "com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
        "How the S3 client signs (only the S3 client: DynamoDB and Kafka keep the job's own credentials). "
        "`DefaultAWSCredentialsProviderChain` (SDK v2's `DefaultCredentialsProvider` too): boto3's chain, the job's "
        "role. `EnvironmentVariableCredentialsProvider`: the keys in each process's environment as the Java SDK v1 "
        "reads them (`AWS_ACCESS_KEY_ID`, else `AWS_ACCESS_KEY`; `AWS_SECRET_KEY`, else `AWS_SECRET_ACCESS_KEY`; "
        "`AWS_SESSION_TOKEN`); Spark executors read their own, so set them for the executors too (absent: a config "
        "error naming this key). With these two, `aws.access.key.id`/`aws.secret.access.key` when set are used "
        "instead, as in the connector. `io.confluent.connect.s3.auth.AwsAccessKeyCredentialsProvider`: the static "
        "keys (required; this class name is not in Confluent's open-source connector). "
        "`io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider`: the role of "
        "`s3.credentials.provider.sts.*`, assumed with the static keys when set, else with the default chain (as the "
        "connector's STS client), refreshed 15 minutes before it expires (runs may outlast the one-hour session); "
        "each process (driver, Spark worker) assumes it once and its clients share the credentials. Another class is "
        "an error naming the key.",
        classes=CREDENTIALS_PROVIDER_CLASSES,
        built=tuple(CREDENTIALS_PROVIDER_CLASSES),
    ),
    Key(
        "s3.credentials.provider.sts.role.arn",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the role to assume (required); the deployed job role may `sts:AssumeRole` "
        "exactly this role and gets no object grant of its own: the assumed role's policy must grant the connector's "
        "object writes under `<topics.dir>/<topic>/` and its dead-letter folder (PutObject, AbortMultipartUpload, "
        "PutObjectTagging with tagging, GetObject of dead letters, ListBucketMultipartUploads) and, with an SSE-KMS "
        "bucket, the key's GenerateDataKey and Decrypt; its trust policy must name the job role and the external id. "
        "With `IcebergFormat`, table files are written by pyiceberg with the job role's credentials (or "
        "`iceberg.catalog.*` properties), not through this provider.",
    ),
    Key(
        "s3.credentials.provider.sts.role.session.name",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the session name of AssumeRole; required, as the connector requires it (it "
        "has no default).",
    ),
    Key(
        "s3.credentials.provider.sts.role.external.id",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the external id of AssumeRole; required, as the connector requires it (it "
        "has no default).",
    ),
    Key(
        "s3.credentials.provider.sts.region",
        "string",
        None,
        "AwsAssumeRoleCredentialsProvider: the STS client's region (unset: `AWS_REGION`/`AWS_DEFAULT_REGION`, else "
        "`s3.region`).",
    ),
    Key(
        "s3.proxy.url",
        "string",
        None,
        "An HTTP proxy for the S3 client, `http://host:port` or `https://host:port` (a path is ignored); user and "
        "password from the URL's `user:password@` unless `s3.proxy.user` / `s3.proxy.password` set them, as in the "
        "connector. Every S3 request goes through it with that Proxy-Authorization; the STS client (assume role), "
        "DynamoDB and Kafka do not use it. A password in the URL is a credential: a `${secrets:...}`/`${ssm:...}` "
        "reference in a deployed file, masked by `validate`.",
    ),
    Key("s3.proxy.user", "string", None, "User of the `s3.proxy.url` proxy, instead of the URL's."),
    Key(
        "s3.proxy.password",
        "string",
        None,
        "Password of the `s3.proxy.url` proxy, instead of the URL's. A credential: a `${secrets:...}`/`${ssm:...}` "
        "reference in a deployed file, masked by `validate` (so is a password in the URL).",
    ),
)
# Confluent Cloud's own keys, with connector.class S3_SINK (see config/cloud.py for what each one means here).
CLOUD_KEYS: tuple[Key, ...] = (
    Key(
        "input.data.format",
        "string",
        None,
        "Confluent Cloud: the value converter. `AVRO` AvroConverter, `JSON_SR` "
        "`io.confluent.connect.json.JsonSchemaConverter`, `PROTOBUF` "
        "`io.confluent.connect.protobuf.ProtobufConverter`, `JSON` JsonConverter with `schemas.enable=false` "
        "(schemaless), `STRING` StringConverter, `BYTES` ByteArrayConverter. `AVRO`, `JSON_SR` and `PROTOBUF` read "
        "through a Schema Registry, which a Cloud file does not name (Cloud finds its own): see [Confluent Cloud "
        "configs](configuration/confluent-cloud.md). Required with `connector.class` `S3_SINK`.",
    ),
    Key(
        "input.key.format",
        "string",
        None,
        "Confluent Cloud: the key converter, the values of `input.data.format` (for `store.kafka.keys`).",
    ),
    Key(
        "output.data.format",
        "string",
        None,
        "Confluent Cloud: the format, `AVRO`, `JSON`, `PARQUET`, `BYTES` (`format.class` AvroFormat, JsonFormat, "
        "ParquetFormat, ByteArrayFormat). Required with `connector.class` `S3_SINK`.",
    ),
    Key(
        "output.keys.format",
        "string",
        None,
        "Confluent Cloud: the format of the keys files (`store.kafka.keys`), as "
        "`output.data.format` names formats: `keys.format.class`.",
    ),
    Key(
        "output.headers.format",
        "string",
        None,
        "Confluent Cloud: the format of the headers files "
        "(`store.kafka.headers`), as `output.data.format` names formats: "
        "`headers.format.class`.",
    ),
    Key(
        "compression.codec",
        "string",
        None,
        "Confluent Cloud: `<FORMAT> - <codec>` of `output.data.format`: `AVRO - bzip2`, `AVRO - deflate`, `AVRO - "
        "snappy` (`avro.codec`), `BYTES - gzip`, `JSON - gzip` (`s3.compression.type`), `PARQUET - gzip`, `PARQUET - "
        "snappy` (`parquet.codec`), or `<FORMAT> - none`; unset: the format's default. `s3.compression.level` is the "
        "gzip level.",
    ),
    Key(
        "time.interval",
        "string",
        None,
        "Confluent Cloud: `HOURLY` or `DAILY` makes the TimeBasedPartitioner with one-hour or one-day buckets, "
        "`path.format` defaulting to `'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH` or "
        "`'year'=YYYY/'month'=MM/'day'=dd`, the Kafka record time (`timestamp.extractor` Record) or, with "
        "`timestamp.field`, that field (RecordField), and `rotate.interval.ms` defaulting to the interval. Required "
        "with `connector.class` `S3_SINK` unless `partitioner.class` is set.",
    ),
    Key(
        "kafka.auth.mode",
        "string",
        None,
        "Confluent Cloud: `KAFKA_API_KEY` (the default) is `kafka.api.key` and `kafka.api.secret`. `SERVICE_ACCOUNT` "
        "(with `kafka.service.account.id`): the identity Confluent Cloud's connector reads Kafka as means the job's "
        "own Kafka identity here (MSK IAM through the job's role, or the `consumer.override.*` security settings), as "
        "`provider.integration.id` means its own role for S3: the value is recorded; with `kafka.api.key` it is an "
        "error.",
    ),
    Key(
        "kafka.service.account.id",
        "string",
        None,
        "Confluent Cloud: the service account the connector reads Kafka as (`kafka.auth.mode` `SERVICE_ACCOUNT`); "
        "here the job's own Kafka identity (MSK IAM through the job's role, or the `consumer.override.*` security "
        "settings). The value is recorded, not used; with `kafka.api.key` it is an error.",
    ),
    Key(
        "kafka.api.key",
        "string",
        None,
        "Confluent Cloud: Kafka API key, the SASL username, as MSK's SASL/SCRAM takes it: SCRAM-SHA-512 over SASL_SSL "
        "unless `consumer.override.sasl.mechanism` (e.g. `PLAIN`) or `.security.protocol` says otherwise. "
        "`kafka.auth.mode` `KAFKA_API_KEY` (the default) is this.",
    ),
    Key(
        "kafka.api.secret",
        "string",
        None,
        "Confluent Cloud: Kafka API secret, the SASL password with `kafka.api.key`; use a `${secrets:...}` or "
        "`${ssm:...}` reference.",
    ),
    Key(
        "authentication.method",
        "string",
        None,
        "Confluent Cloud: `Access Keys` is the S3 client's static credentials (`aws.access.key.id` and "
        "`aws.secret.access.key`), `IAM Roles` the job's own role (then the keys must be unset).",
    ),
    Key(
        "provider.integration.id",
        "string",
        None,
        "Confluent Cloud: a Confluent provider integration (an IAM role Confluent Cloud assumes) means the job's own "
        "role here: the value is recorded and `s3.credentials.provider.class` is the default chain, which `validate` "
        "shows as `(from provider.integration.id)`; with static keys or another provider class it is an error.",
    ),
    Key("schema.context.name", "string", None, "Confluent Cloud: Schema Registry context; only `default`."),
)


def _converter_keys(role: str) -> tuple[Key, ...]:
    """The settings of the `<role>.converter` (role: value or key), named as the converters name them."""
    prefix = f"{role}.converter."
    return (
        Key(
            prefix + "schema.registry.url",
            "string",
            None,
            "AvroConverter, ProtobufConverter, JsonSchemaConverter (required with them): Confluent Schema Registry "
            "URL(s), comma-separated (`user:password@` in the URL is accepted). A writer schema's schema references "
            "(Avro named types, Protobuf imports, JSON Schema `$ref`s registered under other subjects) are fetched by "
            "subject and version, recursively, once per task.",
        ),
        Key(
            prefix + "basic.auth.credentials.source",
            "choice",
            "url",
            f"Schema Registry converters: where the registry's basic-auth credentials come from: `URL` or `USER_INFO` "
            f"(then `{prefix}basic.auth.user.info` = `user:password`).",
            choices=("url", "user_info"),
        ),
        Key(
            prefix + "basic.auth.user.info",
            "string",
            None,
            "Schema Registry converters: `user:password` for the registry with credentials source `USER_INFO`.",
        ),
        Key(
            f"{prefix}{role}.subject.name.strategy",
            "class",
            SUBJECT_NAME_STRATEGIES["topic"][0],
            f"Schema Registry converters: the subject a writer schema's version (for `schema.compatibility`) is "
            f"looked up under, as Confluent's strategies (`io.confluent.kafka.serializers.subject.*`, or the short "
            f"names) name it: `TopicNameStrategy` `<topic>-{role}`; `RecordNameStrategy` the record's full name (an "
            f"Avro record's `namespace.name`, the full name of the Protobuf message the value's indexes name, a JSON "
            f"Schema's `title`); `TopicRecordNameStrategy` `<topic>-<full name>`. Under the last two a schema without "
            f"a record name (an Avro primitive, a JSON Schema without a title) is a bad record, as in Confluent's "
            f"converters.",
            classes=SUBJECT_NAME_STRATEGIES,
            built=tuple(SUBJECT_NAME_STRATEGIES),
        ),
        Key(
            prefix + "wrapper.for.nullables",
            "bool",
            False,
            "ProtobufConverter: `google.protobuf` wrappers (`Int32Value`, ...) become their nullable primitive instead "
            "of a struct with one field `value`. Its other mapping options that change the output (`int.for.enums`, "
            "`generalized.sum.type.support`, `enhanced.protobuf.schema.support`, `scrub.invalid.names`) are errors "
            "unless off.",
        ),
        Key(
            prefix + "json.fail.invalid.schema",
            "bool",
            False,
            "JsonSchemaConverter: also validate each value against its writer schema (jsonschema, through "
            "confluent-kafka's JSONDeserializer; about 60 µs a record); one that does not validate is a bad record. "
            "Without it, as in Confluent's converter, values are only checked against the Connect types.",
        ),
        Key(
            prefix + "region",
            "string",
            None,
            "AWSKafkaAvroConverter: Glue region of the schema registry (default: boto3's region).",
        ),
        Key(prefix + "endpoint", "string", None, "AWSKafkaAvroConverter: Glue endpoint override."),
        Key(
            prefix + "registry.name",
            "string",
            None,
            "AWSKafkaAvroConverter: accepted for compatibility; reading needs only the schema version id in each "
            "record.",
        ),
    )


# IcebergFormat: named as the Iceberg Kafka Connect sink names them. Every `iceberg.catalog.*` key (these and
# any other, e.g. iceberg.catalog.s3.endpoint, iceberg.catalog.glue.id) is a pyiceberg catalog property.
ICEBERG_KEYS: tuple[Key, ...] = (
    Key(
        "iceberg.tables",
        "list",
        None,
        "IcebergFormat: the destination table, `namespace.table`; `${topic}` in the table name gives each topic its "
        "own table (the topic in lower case, characters other than `a-z`, `0-9`, `_` as `_`). Several tables: static "
        "routing, every record to each (or, with `iceberg.tables.route-field`, to those whose "
        "`iceberg.table.<table>.route-regex` matches; see [Static routing](iceberg.md#static-routing-by-route-regex)). "
        "Required with IcebergFormat, unless `iceberg.tables.dynamic-enabled` routes records by a field (then it is "
        "not read).",
    ),
    Key(
        "iceberg.tables.auto-create-enabled",
        "bool",
        False,
        "IcebergFormat: create a missing table from the first records' schema (every column optional) with the "
        "partition spec of `partitioner.class` (see [Iceberg tables](iceberg.md)); its namespace must exist "
        "(`sink-engine init` creates it).",
    ),
    Key(
        "iceberg.tables.evolve-schema-enabled",
        "bool",
        False,
        "IcebergFormat: schema evolution: a record field the table lacks adds an optional column, a wider type (int "
        "to long, float to double, a larger decimal precision) widens its column; without it such fields are dropped "
        "and narrower values are kept when they fit (see [Iceberg tables](iceberg.md)).",
    ),
    Key(
        "iceberg.tables.kafka-metadata-enabled",
        "bool",
        False,
        "IcebergFormat: add the optional columns `_kafka_metadata_topic`, `_partition`, `_offset`, `_timestamp` and "
        "`_key` (the raw key bytes) to each row.",
    ),
    Key(
        "iceberg.tables.upsert-mode-enabled",
        "bool",
        False,
        "IcebergFormat: upsert tables: the table holds each key's row as of its last change (by the id columns, its "
        "identifier fields), a delete (`iceberg.tables.cdc-field`, or a tombstone: `behavior.on.null.values` defaults "
        "to `write` here) removes it; applied by copy-on-write (see [Upsert tables](iceberg.md#upsert-tables)), by bounded and continuous "
        "runs.",
    ),
    Key(
        "iceberg.tables.default-id-columns",
        "list",
        None,
        "IcebergFormat, upsert mode: the columns whose values name a row (the table's identifier fields), for every "
        "table without its own `iceberg.table.<table>.id-columns`.",
    ),
    Key(
        "iceberg.tables.cdc-field",
        "string",
        None,
        "IcebergFormat, upsert mode: the value field holding each change's operation: `I`, `U`, Debezium's `c`, "
        "`r`, `u` (the row is written) or `D`, `d` (the row of the value's id columns is deleted), e.g. `__op` "
        "from ExtractNewRecordState's `add.fields=op`. Without it every record is an upsert.",
    ),
    Key(
        "iceberg.tables.dynamic-enabled",
        "bool",
        False,
        "IcebergFormat: fan-out: each record goes to the table its `iceberg.tables.route-field` names "
        "(`namespace.table`, lower-cased, as the Iceberg sink reads it) instead of `iceberg.tables`; each table's "
        "records of a run in one snapshot of it, exactly once (see [Fan-out by field](iceberg.md#fan-out-by-field)). "
        "Bounded runs only.",
    ),
    Key(
        "iceberg.tables.route-field",
        "string",
        None,
        "IcebergFormat: the value field (nested `a.b`) records are routed by. With `iceberg.tables.dynamic-enabled` it "
        "names each record's table (a record without it, naming no `namespace.table` (a bare table name takes "
        "`iceberg.tables.default-namespace`), or a table outside `iceberg.tables.route-namespaces`, is a bad record); "
        "without, "
        "each record goes to every table of `iceberg.tables` whose `iceberg.table.<table>.route-regex` matches its "
        "whole value (several or none; a record without it goes to none).",
    ),
    Key(
        "iceberg.tables.default-namespace",
        "string",
        None,
        "IcebergFormat, fan-out by field (`iceberg.tables.dynamic-enabled`): the namespace (Glue database, S3 Tables "
        "namespace) of a route value that names a table alone, without a `.`, as Debezium's `__source_table` does: "
        "`customers` goes to `<namespace>.customers`. Without it such a value is a bad record. It is one of the "
        "namespaces fan-out may reach (`iceberg.tables.route-namespaces`); lower case, as route values are read. "
        "This engine's key (the Iceberg sink has none; named as its `default-*` keys).",
    ),
    Key(
        "iceberg.tables.route-namespaces",
        "list",
        None,
        "IcebergFormat, fan-out by field (`iceberg.tables.dynamic-enabled`): the namespaces (Glue databases, S3 "
        "Tables namespaces) records may be routed to, besides `iceberg.tables.default-namespace`; a record whose "
        "table lies in any other is a bad record naming its offset and the table (dead-lettered or failing the run "
        "per `errors.tolerance`). With neither key set, any namespace. Deployed, the stacks create exactly these "
        "namespaces and grant the job role them alone, and refuse a fan-out connector that declares none (see "
        "[Fan-out by field](iceberg.md#fan-out-by-field)). This engine's key.",
    ),
    Key(
        "iceberg.control.commit.interval-ms",
        "int",
        60_000,
        "IcebergFormat, continuous runs (`run --continuous`): how often a table gets a snapshot. Tasks close their "
        "data files on these wall-clock boundaries and the driver appends what they closed in one snapshot per table, "
        "at most once per interval; a record is in the table about one interval after it was read. The Iceberg Kafka "
        "Connect sink's default is 300000; 60000 gives a fresher table (as Redpanda's Iceberg topics, one minute) "
        "for 1,440 snapshots a day, which `sink-engine iceberg maintain` expires (see [Iceberg tables](iceberg.md)). "
        "A bounded run ignores it (it commits once, at its end).",
        minimum=1000,
    ),
    Key(
        "iceberg.control.commit.threads",
        "int",
        8,
        "IcebergFormat: how many tables' snapshots the driver commits at once (fan-out by field, static routing, "
        "`${topic}` tables: a snapshot per table, at the end of a bounded run and at each interval of a continuous "
        "one). Each table's commit keeps its exactly-once checks, the offsets are committed only once every table "
        "has committed, and a table that fails stops the run naming it (see [Fan-out by "
        "field](iceberg.md#fan-out-by-field)). The Iceberg Kafka Connect sink's key (its default: twice the cores); "
        "1 commits one table after another, in name order. The catalog's request rate bounds what more threads gain "
        "(AWS Glue throttles an account's requests per Region).",
        minimum=1,  # the Iceberg sink's thread pool needs one (IcebergSinkConfig declares it a Java INT)
        maximum=JAVA_INT_MAX,
    ),
    Key("iceberg.catalog", "string", "iceberg", "IcebergFormat: the catalog's name (pyiceberg's catalog name)."),
    Key(
        "iceberg.catalog.type",
        "choice",
        None,
        "IcebergFormat: `sql` (a SQLAlchemy URL in `iceberg.catalog.uri`, e.g. `sqlite:////path/catalog.db`: local "
        "stacks), `glue` (the AWS Glue Data Catalog) or `rest` (an Iceberg REST catalog through pyiceberg's "
        "RestCatalog, such as S3 Tables'). Required with IcebergFormat.",
        choices=("sql", "glue", "rest"),
    ),
    Key(
        "iceberg.catalog.uri",
        "string",
        None,
        "IcebergFormat: with `sql`, the SQL catalog URL (a SQLAlchemy URL); with `rest`, the catalog's endpoint, "
        "required unless the warehouse is an S3 table bucket's ARN (then S3 Tables' endpoint in its region).",
    ),
    Key(
        "iceberg.catalog.warehouse",
        "string",
        None,
        "IcebergFormat: where new tables are located, `s3://bucket/prefix` (required with `sql`; with `glue` a table "
        "lies under its database's location: deployed, unset). With `rest`: the catalog's warehouse, for S3 Tables "
        "the table bucket's ARN (which brings its SigV4 defaults, see `iceberg.catalog.*`).",
    ),
)

KEYS: tuple[Key, ...] = (
    Key(
        "name",
        "string",
        REQUIRED,
        "Connector name; keys the offsets and the lease in DynamoDB (1 to 2,048 bytes of "
        "UTF-8: DynamoDB's partition key limit).",
    ),
    Key(
        "connector.class",
        "string",
        S3_SINK_CLASS,
        "The S3 sink connector, `io.confluent.connect.s3.S3SinkConnector`, or `S3_SINK`: Confluent Cloud's, whose "
        "keys and defaults then apply (see [Confluent Cloud configs](configuration/confluent-cloud.md)).",
    ),
    Key(
        "topics",
        "list",
        None,
        "Comma-separated topics to sink. Exactly one of `topics` and `topics.regex` is required.",
    ),
    Key(
        "topics.regex",
        "string",
        None,
        "Regular expression of topics to sink (full match). Exactly one of `topics` and `topics.regex` is required.",
    ),
    Key(
        "bootstrap.servers",
        "list",
        None,
        "Kafka bootstrap servers, `host:port`, comma-separated. A Kafka Connect worker setting, which a connector "
        "JSON does not carry: unset, it comes from the worker's settings (`--worker FILE`, a "
        "`connect-distributed.properties`: its `consumer.bootstrap.servers`, else `bootstrap.servers`; or "
        "`CONNECT_BOOTSTRAP_SERVERS`), and in a deployed job from the environment's MSK cluster (`msk.cluster_arn`: "
        "GetBootstrapBrokers at run time). Set in the connector file, it wins over the worker's (Connect itself "
        "would ignore it there; `consumer.override.bootstrap.servers` wins over both). See [Worker "
        "settings](configuration/worker.md).",
    ),
    *CONNECTION_KEYS,
    Key(
        "tasks.max",
        "int",
        1,
        "Cap on the Spark tasks that read the connector's topic-partitions in parallel (a continuous run of several "
        "connectors: the job's tasks, no more than its task slots, each serve shares of several connectors; a "
        "connector has a share in at most this many).",
        minimum=1,
        maximum=JAVA_INT_MAX,
    ),
    Key("s3.bucket.name", "string", REQUIRED, "Target bucket, which receives the objects."),
    Key("s3.region", "string", "us-west-2", "Region of the bucket."),
    Key(
        "store.url",
        "string",
        None,
        "S3 endpoint override; unset uses `AWS_ENDPOINT_URL(_S3)` or the regional endpoint.",
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
        "Records per topic-partition (per schema with `sink.schema.files=separate`) after which its open files are "
        "closed and uploaded. Required; 1000 by default with `connector.class` `S3_SINK`. At most 2,147,483,647: "
        "Confluent's is a Java int, as are `tasks.max`, `s3.part.retries` and the other count keys; durations in ms "
        "are Java longs.",
        minimum=1,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "format.class",
        "class",
        REQUIRED,
        "Output format: `JsonFormat`, `ParquetFormat`, `AvroFormat`, `ByteArrayFormat` (Confluent class names or "
        "short names) or `BlockGzipFormat` (see [Output](output/index.md)), `EnvelopeFormat` (each Kafka record "
        "whole, a backup: see [Backups](output/envelope.md)), or `IcebergFormat`: rows of an Apache Iceberg table "
        "(`iceberg.*` keys, see [Iceberg tables](iceberg.md)).",
        classes=FORMAT_CLASSES,
        built=("json", "parquet", "avro", "bytearray", "blockgzip", "iceberg", "envelope"),
    ),
    Key(
        "s3.compression.type",
        "choice",
        "none",
        "`none` or `gzip` for `JsonFormat` (`.json.gz`), `ByteArrayFormat` (`.bin.gz`) and `EnvelopeFormat`'s json "
        "encoding (`.envelope.json.gz`).",
        choices=("none", "gzip"),
    ),
    Key(
        "json.decimal.format",
        "choice",
        "base64",
        "How JsonFormat and BlockGzipFormat write Decimal fields of records with a schema: `BASE64` (of the unscaled "
        "value, Connect's default) or `NUMERIC` (a JSON number with the decimal's scale, e.g. `2.50`); a Decimal that "
        "is a whole top-level value stays base64.",
        choices=("base64", "numeric"),
    ),
    Key(
        "s3.compression.level",
        "int",
        -1,
        "gzip level of JSON, ByteArray and Block-GZIP objects: -1 (6) or 0-9.",
        minimum=-1,
        maximum=9,
    ),
    Key(
        "parquet.codec",
        "choice",
        "snappy",
        "ParquetFormat (and EnvelopeFormat's parquet) codec: `none`, `snappy`, `gzip` (level 6), `lz4` (Parquet's "
        "LZ4_RAW), `zstd`, `brotli`.",
        choices=("none", "snappy", "gzip", "lz4", "zstd", "brotli"),
    ),
    Key(
        "avro.codec",
        "choice",
        "null",
        "AvroFormat (and EnvelopeFormat's avro) compression codec.",
        choices=("null", "deflate", "snappy", "bzip2", "zstandard", "xz"),
    ),
    Key("format.bytearray.extension", "string", ".bin", "Extension of ByteArrayFormat objects."),
    Key(
        "format.bytearray.separator",
        "string",
        "\\n",
        "ByteArrayFormat: written after every record; Java escapes (`\\n`, `\\r`, `\\t`, `\\\\`, `\\uXXXX`) are "
        "unescaped; may be empty.",
    ),
    Key(
        "format.blockgzip.block.size",
        "int",
        64 * 1024 * 1024,
        "BlockGzipFormat: uncompressed bytes after which the record that reaches them ends a gzip member (64 MiB by "
        "default).",
        minimum=1,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "format.envelope.encoding",
        "choice",
        "parquet",
        "EnvelopeFormat: how each record's envelope is written: `parquet` (`.envelope<codec>.parquet`, "
        "`parquet.codec`), `avro` (`.envelope.avro`, `avro.codec`) or `json` (`.envelope.json`, `.envelope.json.gz` "
        "with `s3.compression.type=gzip`; bytes as base64); set with another format it is an error (see "
        "[Backups](output/envelope.md)).",
        choices=("parquet", "avro", "json"),
    ),
    Key(
        "s3.ssea.name",
        "choice",
        "",
        "Server-side encryption of the objects: `AES256`, `aws:kms` or `aws:kms:dsse`; unset sends none (the bucket's "
        "default applies).",
        choices=("", "aes256", "aws:kms", "aws:kms:dsse"),
    ),
    Key(
        "s3.sse.kms.key.id",
        "string",
        None,
        "KMS key id, alias or ARN for `aws:kms`; unset: the AWS managed key. An error with any other `s3.ssea.name`.",
    ),
    Key(
        "s3.acl.canned",
        "choice",
        None,
        "Canned ACL sent with every object (`private`, `bucket-owner-full-control`, `public-read`, ...); unset: none "
        "sent.",
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
    Key(
        "s3.object.tagging",
        "bool",
        False,
        "Tag each data object with `startOffset`, `endOffset` (its last record's "
        "offset) and `recordCount`, as the Confluent connector does; set with the "
        "upload, not after it.",
    ),
    Key(
        "s3.part.size",
        "int",
        DEFAULT_PART_SIZE,
        "Objects larger than this (25 MiB by default; 5 MiB at least) go up as a multipart upload in parts of this "
        "size, sent while the file is written; also the size of a Parquet row group (in Kafka value bytes) and of the "
        "in-memory part of a schemaless-JSON Parquet/Avro file, whose rest spills to local disk (see [Streaming to "
        "S3](output/index.md#streaming-to-s3)).",
        minimum=5 * 1024 * 1024,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "s3.part.retries",
        "int",
        3,
        "Retries of a failed upload request (put, each part, complete) after connection errors, throttling and 5xx "
        "answers; 0 for none. A multipart upload that fails for good is aborted.",
        minimum=0,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "s3.retry.backoff.ms",
        "int",
        200,
        "Wait before the first retry; each next one waits up to twice as long, with full jitter, at most 20 s.",
        minimum=0,
    ),
    Key(
        "partitioner.class",
        "class",
        f"{_STORAGE}.partitioner.DefaultPartitioner",
        "Partitioner of object keys: `DefaultPartitioner`, `FieldPartitioner`, `TimeBasedPartitioner`, "
        "`DailyPartitioner`, `HourlyPartitioner`, and this engine's `FieldAndTimeBasedPartitioner` (see [Partitioning "
        "and rotation](output/partitioning.md)).",
        classes=PARTITIONER_CLASSES,
        built=("default", "field", "time", "daily", "hourly", "fieldtime"),
    ),
    Key(
        "partition.field.name",
        "list",
        None,
        "FieldPartitioner, FieldAndTimeBasedPartitioner: comma-separated fields (nested as `a.b`) whose values name "
        "the key path segments (`<field>=<value>`).",
    ),
    Key(
        "path.format",
        "string",
        "",
        "TimeBasedPartitioner, FieldAndTimeBasedPartitioner: Joda-Time pattern of the time path, e.g. "
        "`'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH`.",
    ),
    Key(
        "partition.duration.ms",
        "int",
        -1,
        "TimeBasedPartitioner, FieldAndTimeBasedPartitioner: length of a time bucket in ms (required, positive).",
    ),
    Key(
        "locale",
        "string",
        "en",
        "Time-based partitioners: month, day, AM/PM and era names in `path.format`, read as the connector reads it, "
        "Java's `new Locale(value)`, which refuses nothing: the whole value is a language, lower-cased (`EN` is `en`; "
        "`en_US`, `en-US`, `fr_FR` are the languages `en_us`, `en-us`, `fr_fr`). A language Java has data for gives "
        "its CLDR names (`en` March, `fr` mars, `de` März); any other value (`US`, `en_US`, `fr-FR`, `xx`) gives the "
        "root locale's names as Java 9+ writes them: `Jan`, `Mon` at every width, `AM`, `CE` (measured with Joda-Time "
        "2.12 on OpenJDK 17; Java 8's legacy data would say `January`, `Monday`, `AD`). The connector requires it; "
        "here it defaults to `en`.",
    ),
    Key(
        "timezone",
        "string",
        "UTC",
        "Zone of time buckets and of `rotate.schedule.interval.ms`: an IANA id (`Europe/Paris`), `UTC`, `[+-]hh:mm`, "
        "or a Java short id as Java's `ZoneId.SHORT_IDS` maps it (case-sensitive: `PST` America/Los_Angeles, `CST` "
        "America/Chicago, `ECT` Europe/Paris, `IST` Asia/Kolkata, `JST` Asia/Tokyo, ...; `EST`, `MST`, `HST` the "
        "fixed offsets -05:00, -07:00, -10:00). The connector requires it; here it defaults to `UTC`.",
    ),
    Key(
        "timestamp.extractor",
        "choice",
        "wallclock",
        "Time of a record for time-based partitioners and `rotate.interval.ms`: `Record` (Kafka timestamp), "
        "`RecordField` (`timestamp.field`), `Wallclock` (the run's planned time, recorded with the plan so that a "
        "rerun writes the same keys: see [Partitioning and rotation](output/partitioning.md)). Custom extractor "
        "classes are not supported.",
        choices=("wallclock", "record", "recordfield"),
    ),
    Key(
        "timestamp.field",
        "string",
        "timestamp",
        "RecordField: the field (nested as `a.b`) holding epoch ms (number or digits), a Connect `Timestamp` or an "
        "ISO-8601 time (UTC when it has no offset).",
    ),
    Key(
        "partitioner.max.open.files",
        "int",
        1000,
        "Cap on open files per topic-partition; a record that would open one more first closes them all (0 or -1: no "
        "cap; -1 is the connector's default, 1000 this engine's, which bounds a task's memory).",
        minimum=-1,
        maximum=JAVA_INT_MAX,
    ),
    Key(
        "rotate.interval.ms",
        "int",
        -1,
        "Close a topic-partition's open files when a record's time (Record, RecordField) is this far past the first "
        "open record's, with any partitioner (the connector ignores it without a time-based one); with a time-based "
        "partitioner a change of encoded partition closes them too, as in the connector. With Wallclock it is "
        "wall-clock rotation, decided per run like `rotate.schedule.interval.ms` without the alignment. -1: off.",
        minimum=-1,
    ),
    Key(
        "rotate.schedule.interval.ms",
        "int",
        -1,
        "Wall-clock rotation: a run that starts past the next boundary (multiples of the interval from midnight in "
        "`timezone`) after a partition's last commit closes all of that partition's files at the end of its range, so "
        "idle partitions land within about one interval of a run. Recorded with the plan: a rerun after a crash cuts "
        "at the same offset. -1: off.",
        minimum=-1,
    ),
    Key(
        "rotate.file.on.partition.change",
        "bool",
        True,
        "With `rotate.interval.ms` and a time-based partitioner (only then, as in the connector): close the open files "
        "when a record's encoded partition differs from the previous record's. `false`: records of hours out of order "
        "stay in one open file per encoded partition until a time, size or open-file trigger.",
    ),
    Key(
        "value.converter",
        "class",
        "org.apache.kafka.connect.json.JsonConverter",
        "Converter of record values: `JsonConverter`, `AvroConverter`, `ProtobufConverter` "
        "(`io.confluent.connect.protobuf.ProtobufConverter`), `JsonSchemaConverter` "
        "(`io.confluent.connect.json.JsonSchemaConverter`) (these three: Confluent Schema Registry wire format, see "
        "[Schemas](schemas/index.md)), `AWSKafkaAvroConverter` "
        "(`com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter`, AWS Glue Schema Registry wire "
        "format), `StringConverter`, `ByteArrayConverter`.",
        classes=CONVERTER_CLASSES,
        built=BUILT_CONVERTERS,
    ),
    Key(
        "value.converter.schemas.enable",
        "bool",
        True,
        'JsonConverter: `true` (Kafka Connect\'s default) reads Kafka Connect\'s `{"schema": ..., "payload": ...}` '
        "envelope (see [Schemas](schemas/index.md)); `false` plain JSON.",
    ),
    *_converter_keys("value"),
    Key(
        "key.converter",
        "class",
        "org.apache.kafka.connect.storage.StringConverter",
        "Converter of record keys, used for the keys sidecar files (`store.kafka.keys`) and the tombstones of an "
        "upsert table (`iceberg.tables.upsert-mode-enabled`): the same converters and settings as "
        "`value.converter`, for record keys (subject `<topic>-key` by default).",
        classes=CONVERTER_CLASSES,
        built=BUILT_CONVERTERS,
    ),
    Key(
        "key.converter.schemas.enable",
        "bool",
        True,
        'JsonConverter for keys: `true` (Kafka Connect\'s default) reads the `{"schema": ..., "payload": ...}` '
        "envelope; `false` plain JSON.",
    ),
    *_converter_keys("key"),
    Key(
        "schema.compatibility",
        "choice",
        "none",
        "`NONE`, `BACKWARD`, `FORWARD`, `FULL`: when a schema change closes files and how records are projected (see "
        "[Schemas](schemas/index.md)). Within a topic-partition's open files, NONE rotates on any schema change (with "
        "`sink.schema.files=rotate`; by default each schema has its own files); BACKWARD and FULL rotate on a newer "
        "schema version and project older records to the current schema; FORWARD rotates on an older version and "
        "projects newer records to the current schema.",
        choices=("none", "backward", "forward", "full"),
    ),
    Key(
        "sink.schema.files",
        "choice",
        "separate",
        "With `schema.compatibility=NONE`: `separate` gives each schema of a topic-partition's records its own open "
        "files, which close on their own `flush.size`, so a topic of several event types or schema versions does not "
        "close its files at every change of schema; `rotate` closes every open file at each change, as the Confluent "
        "connector does (its file boundaries). No effect under the other modes or with `IcebergFormat` (see [Several "
        "schemas in a topic](schemas/several-schemas.md)).",
        choices=("separate", "rotate"),
    ),
    Key(
        "store.kafka.keys",
        "bool",
        False,
        "Also write each data object's record keys (converted with `key.converter`) to `<stem>.keys<ext>` beside it "
        "(`keys.format.class`), one record per data record in the same order; a null key then fails the run (as in "
        "the connector). In JSON and Avro a key is its converted value (Avro: of its own type); Parquet wraps it as "
        "a record `RecordKey{key}`, as the connector's writers do.",
    ),
    Key(
        "store.kafka.headers",
        "bool",
        False,
        "Also write each data object's record headers to `<stem>.headers<ext>` beside it (`headers.format.class`), "
        "one record per data record in the same order; a record without headers then fails the run (as in the "
        'connector). The headers are a list of `{"key", "value"}` (value as UTF-8 text, base64 when not UTF-8): in '
        'JSON and Parquet wrapped as `{"headers": [...]}` (Parquet: a record `RecordHeaders`), in Avro the list '
        "alone, as the connector's writers do.",
    ),
    Key(
        "keys.format.class",
        "class",
        f"{_S3}.format.avro.AvroFormat",
        "Format of the keys sidecar objects (`store.kafka.keys`).",
        classes=FORMAT_CLASSES,
        built=SIDECAR_FORMATS,
    ),
    Key(
        "headers.format.class",
        "class",
        f"{_S3}.format.avro.AvroFormat",
        "Format of the headers sidecar objects (`store.kafka.headers`).",
        classes=FORMAT_CLASSES,
        built=SIDECAR_FORMATS,
    ),
    Key(
        "transforms",
        "list",
        (),
        "Comma-separated aliases of single message transforms, applied to each record in order; "
        "`transforms.<alias>.type` and the alias's options (see [Single message transforms](transforms/index.md)).",
    ),
    Key(
        "predicates",
        "list",
        (),
        "Comma-separated aliases of predicates that `transforms.<alias>.predicate` names; `predicates.<alias>.type` "
        "and options (see [Single message transforms](transforms/index.md)).",
    ),
    Key(
        "behavior.on.null.values",
        "choice",
        "fail",
        "What a record with a null value (tombstone) does: `fail` (a tombstone fails the run, naming it), `ignore`, "
        "or `write`: tombstones go to files under `tombstone.encoded.partition`, in offset order with the other "
        "records and counted by `flush.size`; each tombstone is one JSON `null` line there (the connector writes only "
        "key files for them). A value the converter reads as null is a null value too, as in Kafka Connect: the JSON "
        "`null`, a JsonConverter envelope's null payload under an optional schema, an Avro null under a top-level "
        '`["null", record]` union. In an upsert table (`iceberg.tables.upsert-mode-enabled`, not routed by field) the '
        "default is `write`: a tombstone deletes the row its key names.",
        choices=("fail", "ignore", "write"),
    ),
    Key(
        "tombstone.encoded.partition",
        "string",
        "tombstone",
        "Encoded partition (key path segment) of tombstones with `behavior.on.null.values=write`.",
    ),
    Key(
        "errors.tolerance",
        "choice",
        "none",
        "`none`: a bad record fails the run, naming topic, partition, offset and cause; nothing past it is committed. "
        "`all`: it goes to the dead-letter queue (or, with none configured, is skipped and counted) and the run goes "
        "on (see [Dead-letter queue](dead-letter-queue.md)).",
        choices=("none", "all"),
    ),
    Key(
        "errors.deadletterqueue.topic.name",
        "string",
        "",
        "Kafka topic of dead letters with `errors.tolerance=all` (created with one partition when missing); original "
        "key, value and headers.",
    ),
    Key(
        "errors.deadletterqueue.topic.replication.factor",
        "int",
        3,
        "Replication factor of the dead-letter topic when the sink creates it; more than the cluster's brokers (a "
        "2-broker MSK cluster) fails the run naming this key.",
        minimum=1,
        maximum=JAVA_SHORT_MAX,
    ),
    Key(
        "errors.deadletterqueue.context.headers.enable",
        "bool",
        False,
        "Add Kafka Connect's `__connect.errors.*` context headers to dead letters on the topic.",
    ),
    Key(
        "errors.deadletterqueue.s3.prefix",
        "string",
        "",
        "Instead of a topic: a prefix in `s3.bucket.name` for dead letters as JSON lines (not `topics.dir`).",
    ),
    Key(
        "errors.log.enable",
        "bool",
        False,
        "Log each bad record as a `RECORD_FAILED` event (topic, partition, offset, error class, stage, message).",
    ),
    Key(
        "errors.log.include.messages",
        "bool",
        False,
        "With `errors.log.enable`: add the record's key, value and headers (base64) to the event.",
    ),
    *ICEBERG_KEYS,
    Key(
        "offset.storage.dynamodb.table",
        "string",
        "sink-engine-offsets",
        "DynamoDB table of committed offsets and the run lease (string keys `pk`, `sk`).",
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
        "Lease time; a run renews it every third of it; a crashed run's lease lapses after it.",
        minimum=1000,
    ),
    Key(
        "sink.continuous.metrics.interval.ms",
        "int",
        60_000,
        "A continuous run (`run --continuous`): how often each of its tasks reports its partitions' freshness (the "
        "age of the oldest record read but not yet in S3), records written and lag, as a STREAM_PROGRESS event and, "
        "with SINK_METRICS=cloudwatch, as the metrics StreamFreshnessSeconds, StreamRecordsWritten and StreamLag; "
        "and how often the run's driver says its progress line (the tasks' totals) on standard output.",
        minimum=1000,
    ),
    Key(
        "sink.run.timeout.ms",
        "int",
        3_600_000,
        "Time bound of a run from its start (1 hour by default; 0: none): past it each range stops at its next chunk "
        "and commits what its closed files hold (exit 1 naming the key; the next run goes on from there); a task that "
        "does not stop within a grace (a quarter of the timeout, 1 to 60 s: stuck outside Kafka) has the run's Spark "
        "job cancelled (`RUN_TIMED_OUT`), nothing is committed. The lease is released either way.",
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
    "iceberg.tables.default-partition-by": "a partition spec other than partitioner.class's",
}
# Values of NOT_BUILT_YET keys that mean "feature off" and so are accepted.
OFF_VALUES = {"", "-1", "false", "none", "null"}

KEYS_BY_NAME = {k.name: k for k in KEYS}
# Keys under these prefixes are passed on (Kafka client settings, pyiceberg catalog properties, table properties
# of auto-created tables, the options of transforms and predicates: sink_engine/transform/settings.py); declared
# keys under them are parsed as declared. Each with its doc, as a Key's (the configuration reference's rows).
PASSTHROUGH_DOCS: dict[str, str] = {
    "consumer.override.": (
        "Passed to the Kafka client (librdkafka) under the same name; authentication as described under [Kafka "
        "authentication](configuration/kafka-authentication.md). Java-client settings that mean nothing to librdkafka "
        "and carry no credential are left out: `key.deserializer`, `value.deserializer`, `max.poll.records`, "
        "`partition.assignment.strategy`, `interceptor.classes`, `default.api.timeout.ms`, `request.timeout.ms`, "
        "`retry.backoff.ms`, `security.providers`, `ssl.endpoint.identification.algorithm` (librdkafka always verifies "
        "host names) and the JKS `ssl.truststore.*`/`ssl.keystore.type` (librdkafka trusts the system's CAs, which "
        "sign MSK's certificates; name a private CA with `ssl.ca.location`). `consumer.override.auto.offset.reset` "
        "(`earliest`, the default, or `latest`) is where a partition with no committed offset starts."
    ),
    "iceberg.catalog.": (
        "IcebergFormat: every other `iceberg.catalog.*` key is a pyiceberg catalog property "
        "(`iceberg.catalog.glue.id`, `iceberg.catalog.s3.endpoint`, ...); the data files' S3 endpoint and region "
        "default to the engine's (`store.url`, `AWS_ENDPOINT_URL(_S3)`, `s3.region`). With `rest`, "
        "`iceberg.catalog.rest.sigv4-enabled`, `.rest.signing-name` and `.rest.signing-region` sign the catalog's "
        "requests with SigV4 (pyiceberg's properties); a warehouse `arn:aws:s3tables:<region>:<account>:bucket/<name>` "
        "makes them default to S3 Tables' as AWS documents them: `true`, `s3tables`, the bucket's region, and "
        "`iceberg.catalog.uri` to `https://s3tables.<region>.amazonaws.com/iceberg`; a key set wins."
    ),
    "iceberg.table.": (
        "IcebergFormat: a table's own keys. Upsert mode: `iceberg.table.<namespace.table>.id-columns`, its id columns "
        "(comma-separated), over `iceberg.tables.default-id-columns`. Static routing: "
        "`iceberg.table.<namespace.table>.route-regex`, the regular expression a record's `iceberg.tables.route-field` "
        "value must match whole for the record to go to that table of `iceberg.tables`."
    ),
    "iceberg.tables.auto-create-props.": (
        "IcebergFormat: table properties of an auto-created table, e.g. "
        "`iceberg.tables.auto-create-props.write.target-file-size-bytes`."
    ),
    "transforms.": (
        "`transforms.<alias>.type` names a transform's class; the alias's other keys are its options (see [Single "
        "message transforms](transforms/index.md))."
    ),
    "predicates.": ("`predicates.<alias>.type` names a predicate's class; the alias's other keys are its options."),
}
PASSTHROUGH_PREFIXES = tuple(PASSTHROUGH_DOCS)
