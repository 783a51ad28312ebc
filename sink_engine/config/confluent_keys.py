"""The Confluent and Kafka Connect keys that exist but change nothing a run does here, each with why; the converter
options accepted only at Confluent's default; and the look-alike keys people write for a key that exists.

Taken from the ConfigDef declarations of kafka-connect-storage-cloud (S3SinkConnectorConfig),
kafka-connect-storage-common (StorageSinkConnectorConfig, StorageCommonConfig, PartitionerConfig, HiveConfig),
Apache Kafka's ConnectorConfig / SinkConnectorConfig / WorkerConfig / JsonConverterConfig, schema-registry's
converter configs (AvroDataConfig, ProtobufDataConfig, JsonSchemaDataConfig, AbstractDataConfig, the serde
configs) and Confluent Cloud's S3_SINK documentation. The keys the engine
honours are declared in config/keys.py; the keys whose feature is refused are in config/key_policy.py.
"""

from __future__ import annotations

_NEXT_RUN = "a failed run here exits and the next run retries"
_WORKER = "a Kafka Connect worker setting; a connector config does not set it and nothing here reads it"
_HIVE = "used only with hive.integration, which is refused unless false"
_CONVERTER_ONLY = "Connect reads it only under value.converter. / key.converter.; set {role}.converter.{key}"

# key -> why it has no effect here
NO_EFFECT: dict[str, str] = {
    # Kafka Connect's connector-level keys (ConnectorConfig, SinkConnectorConfig)
    "header.converter": "headers are read as bytes (UTF-8 text where they decode) for store.kafka.headers and "
    "dead letters; Connect's header converter only types them for SMTs",
    "tasks.max.enforce": "Kafka Connect's check of a connector's task count; tasks.max caps Spark tasks here",
    # Kafka Connect worker keys pasted into connector files
    **{
        key: _WORKER
        for key in (
            "internal.key.converter",
            "internal.value.converter",
            "internal.key.converter.schemas.enable",
            "internal.value.converter.schemas.enable",
            "group.id",
            "plugin.path",
            "offset.flush.interval.ms",
            "offset.flush.timeout.ms",
            "offset.storage.topic",
            "offset.storage.replication.factor",
            "offset.storage.partitions",
            "config.storage.topic",
            "config.storage.replication.factor",
            "status.storage.topic",
            "status.storage.replication.factor",
            "status.storage.partitions",
            "rest.port",
            "rest.advertised.host.name",
            "listeners",
            "connector.client.config.override.policy",
            "offset.storage.file.filename",
        )
    },
    # Confluent Cloud consumer keys
    "max.poll.interval.ms": "Confluent Cloud's consumer poll interval; a run reads its planned ranges and ends",
    "max.poll.records": "Confluent Cloud's consumer batch size; the engine sizes its own fetches",
    "csfle.onFailure": "used only with csfle.enabled, which is refused unless false",
    # StorageSinkConnectorConfig / AvroDataConfig
    "connect.meta.data": "Connect's connect.* properties in Avro schemas; the output carries the schema's name "
    "and version either way",
    "schema.generator.class": "a class of the Hive schema generator of old connector versions; unused without Hive",
    # S3SinkConnectorConfig
    "s3.object.behavior.on.tagging.error": "tags go with the upload here (s3.object.tagging), so a tagging error "
    "fails the upload itself",
    "enable.conditional.writes": "the Java connector's exactly-once by conditional uploads; a run here is "
    "exactly-once by its DynamoDB commit",
    "max.files.scan.limit": "an internal limit of the Java connector's conditional writes",
    "max.write.duration.ms": "how long a Connect task may spend in one put call; a run here plans bounded ranges",
    "s3.send.digest": "an MD5 header of the Java AWS SDK; boto3 sends checksums of its own",
    # HiveConfig
    **{key: _HIVE for key in ("hive.metastore.uris", "hive.conf.dir", "hive.home", "hive.database")},
    # converter keys unprefixed: Connect passes a converter only its own prefix
    **{
        key: _CONVERTER_ONLY.format(role="value", key=key)
        for key in (
            "schema.registry.url",
            "basic.auth.credentials.source",
            "basic.auth.user.info",
            "schemas.enable",
            "value.subject.name.strategy",
            "auto.register.schemas",
            "use.latest.version",
        )
    },
}
# key prefixes -> why keys under them have no effect here
NO_EFFECT_PREFIXES: dict[str, str] = {
    "_": "a comment (a key starting with _); nothing reads it",
    "log4j.": "a log4j logger setting of the Connect worker; the engine logs through Python's logging",
    "producer.override.": "the dead-letter producer here takes consumer.override.*'s connection settings",
    "admin.override.": "the admin client here (dead-letter topics) takes consumer.override.*'s connection settings",
    "confluent.topic.": "the license topic of Confluent's licensed connectors; the S3 sink has none",
    "confluent.license": "the license of Confluent's licensed connectors; the S3 sink needs none",
}
_SERIALIZER = "a serializer setting; the sink only deserializes"
# converter option -> (Confluent's default, as text, lower case; what another value would ask for). Accepted (no
# effect) at the default, which is how the engine reads; any other value is refused. Both roles (value, key).
_CONVERTER_DEFAULT_ONLY: dict[str, tuple[str, str]] = {
    "enhanced.avro.schema.support": ("false", "Avro enums and schema docs kept as such"),
    "ignore.default.for.nullables": ("false", "nullable fields read without their schema default"),
    "discard.type.doc.default": ("false", "Avro type docs and defaults discarded"),
    "allow.optional.map.keys": ("false", "Avro maps with optional string keys"),
    "replace.null.with.default": ("true", "JsonConverter keeping a null where the schema has a default"),
    "generate.index.for.unions": ("true", "Protobuf oneof structs named without an index"),
    "generate.struct.for.nulls": ("false", "Protobuf null values as structs"),
    "wrapper.for.raw.primitives": ("true", "raw Protobuf primitives read without their wrappers"),
    "optional.for.nullables": ("false", "Protobuf nullables as optional fields"),
    "flatten.unions": ("false", "flattened Protobuf oneofs"),
    "object.additional.properties": ("true", "JSON Schema objects closed to additional properties"),
    "use.optional.for.nonrequired": ("false", "non-required JSON Schema properties as optional fields"),
    "ignore.modern.dialects": ("false", "JSON Schema's newer dialects read as draft 7"),
    "preserve.additional.properties": ("false", "JSON Schema additionalProperties kept in the Connect schema"),
    "flatten.singleton.unions": ("true", "Avro singleton unions kept as unions"),
}
DEFAULT_ONLY: dict[str, tuple[str, str]] = {
    "allow.optional.map.keys": ("false", "Connect maps with optional string keys written as Avro maps"),
    **{
        f"{role}.converter.{option}": entry
        for role in ("value", "key")
        for option, entry in _CONVERTER_DEFAULT_ONLY.items()
    },
}
# converter options that only serializers read, under value.converter. and key.converter.
SERIALIZER_OPTIONS = (
    "auto.register.schemas",
    "use.latest.version",
    "latest.compatibility.strict",
    "normalize.schemas",
    "use.schema.id",
    "id.compatibility.strict",
    "decimal.format",
    "json.write.dates.iso8601",
    "json.oneof.for.nullables",
    "json.indent.output",
    "avro.remove.java.properties",
    "reference.subject.name.strategy",
)
_JAVA_RECORDS = (
    "an option of the Java serde's typed records (specific, reflect, POJO); Connect's converter reads generic ones"
)
CONVERTER_NO_EFFECT: dict[str, str] = {
    **{key: _SERIALIZER for key in SERIALIZER_OPTIONS},
    "connect.meta.data": "whether Connect schemas keep the connect.* properties of Avro schemas; the engine reads "
    "names and versions from the writer schema",
    "schemas.cache.size": "the size of the converter's schema cache; the engine sizes its own",
    "schemas.cache.config": "the size of the converter's schema cache; the engine sizes its own",
    "latest.cache.ttl.sec": "a cache of the serializer's latest schema lookups",
    **{
        key: _JAVA_RECORDS
        for key in (
            "specific.avro.reader",
            "avro.reflection.allow.null",
            "avro.use.logical.type.converters",
            "json.fail.unknown.properties",
        )
    },
}

# a key people write for one that exists -> that key
LOOK_ALIKES: dict[str, str] = {
    "s3.endpoint": "store.url",
    "s3.endpoint.url": "store.url",
    "aws.s3.endpoint": "store.url",
    "endpoint": "store.url",
    "aws.region": "s3.region",
    "region": "s3.region",
    "s3.path.style.access": "s3.path.style.access.enabled",
    "bucket": "s3.bucket.name",
    "bucket.name": "s3.bucket.name",
    "s3.bucket": "s3.bucket.name",
    "flush.count": "flush.size",
    "flush.records": "flush.size",
    "topic": "topics",
    "topic.regex": "topics.regex",
    "compression.type": "s3.compression.type",
    "s3.compression": "s3.compression.type",
    "aws.access.key": "aws.access.key.id",
    "aws.secret.key": "aws.secret.access.key",
    "aws.secret.access.key.id": "aws.secret.access.key",
    "partitioner": "partitioner.class",
    "format": "format.class",
    "timestamp.extractor.class": "timestamp.extractor",
    "time.zone": "timezone",
    "rotate.interval": "rotate.interval.ms",
    "rotate.schedule.interval": "rotate.schedule.interval.ms",
    "partition.duration": "partition.duration.ms",
    "s3.part.retry": "s3.part.retries",
    "s3.sse.algorithm": "s3.ssea.name",
    "s3.kms.key.id": "s3.sse.kms.key.id",
    "value.converter.schemas.registry.url": "value.converter.schema.registry.url",
    "key.converter.schemas.registry.url": "key.converter.schema.registry.url",
}


def converter_option(key: str) -> tuple[str, str] | None:
    """(role, option) of a `value.converter.<option>` or `key.converter.<option>` key, else None."""
    for role in ("value", "key"):
        prefix = f"{role}.converter."
        if key.startswith(prefix):
            return role, key[len(prefix) :]
    return None


def prefix_reason(key: str) -> str | None:
    """Why a key under one of NO_EFFECT_PREFIXES has no effect, or None."""
    return next((why for prefix, why in NO_EFFECT_PREFIXES.items() if key.startswith(prefix)), None)
