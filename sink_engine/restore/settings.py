"""The connector keys a restore reads, once: where the backup is, how its objects are written, where its lease and
commits are, and which Kafka cluster and client settings the target gets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.format.registry import format_for
from sink_engine.format.settings import FormatSettings
from sink_engine.source.settings import SourceSettings
from sink_engine.storage.naming import ObjectNaming
from sink_engine.target.s3_objects.verify.settings import folder_router, one_file_stream

# What a restore reads back: the envelope (every field), and ByteArray or JSON values with their sidecars.
READABLE_FORMATS = ("envelope", "bytearray", "json")
# Converters whose output a JSON object or sidecar holds as text a restore can turn back into the record's bytes.
TEXT_CONVERTERS = ("bytearray", "string", "json")


@dataclass(frozen=True)
class RestoreSettings:
    connector: str  # name: its commits say what is complete
    bucket: str  # s3.bucket.name
    naming: ObjectNaming  # topics.dir, directory.delim, file.delim
    formats: FormatSettings
    extension: str  # the data objects' extension
    keys_extension: str | None  # store.kafka.keys: the keys sidecars' extension (keys.format.class)
    headers_extension: str | None  # store.kafka.headers: the headers sidecars' extension (headers.format.class)
    keys_format: str | None
    headers_format: str | None
    key_converter: str  # key.converter, canonical: how a keys sidecar holds a key
    value_converter: str  # value.converter, canonical: how a JSON object holds a value
    offsets_table: str  # offset.storage.dynamodb.table: the commits, the restore's lease and checkpoint
    region: str  # s3.region
    lease_ms: int  # sink.lease.duration.ms: the restore's lease too
    source: SourceSettings  # the connector's Kafka cluster and client settings (the default target)
    one_stream: bool  # a partition's objects follow each other in offsets (verify.settings.one_file_stream)
    folder_of: Callable[[str], str]  # the topic whose folder holds a topic's objects (RegexRouters)

    @classmethod
    def from_config(cls, config: SinkConfig) -> RestoreSettings:
        """Raises ConfigError naming the key when the objects cannot be read back into records."""
        name = config["format.class"]
        if name not in READABLE_FORMATS:
            raise ConfigError(
                "format.class",
                f"{name} objects cannot be restored: a restore reads EnvelopeFormat "
                "objects, or ByteArrayFormat and JsonFormat objects (with store.kafka.keys / "
                "store.kafka.headers sidecars for keys and headers)",
            )
        if name == "json" and config["value.converter"] not in TEXT_CONVERTERS:
            raise ConfigError(
                "value.converter",
                f"JsonFormat objects of {config['value.converter']} values hold "
                "decoded values, which a restore cannot encode back; back up with EnvelopeFormat",
            )
        one_stream = one_file_stream(config)
        if name != "envelope" and not one_stream:
            key = (
                "partitioner.class"
                if config["partitioner.class"] != "default"
                else "behavior.on.null.values"
                if config["behavior.on.null.values"] == "write"
                else "sink.schema.files"
            )
            raise ConfigError(
                key,
                f"{name} objects hold no offsets, so a restore counts a record's offset from its "
                "object's first offset, which needs one file stream per partition (the "
                "DefaultPartitioner, tombstones not in files of their own, no file open per value schema); "
                "back up with EnvelopeFormat",
            )
        keys = config["store.kafka.keys"] and name != "envelope"
        headers = config["store.kafka.headers"] and name != "envelope"
        if keys and config["key.converter"] not in TEXT_CONVERTERS:
            raise ConfigError(
                "key.converter",
                f"keys sidecars of {config['key.converter']} keys hold decoded keys, "
                "which a restore cannot encode back; back up with EnvelopeFormat",
            )
        if headers and config["headers.format.class"] == "bytearray":
            raise ConfigError("headers.format.class", "ByteArrayFormat headers sidecars cannot be read back")
        formats = FormatSettings.from_config(config)
        return cls(
            config.name,
            config["s3.bucket.name"],
            ObjectNaming.from_config(config),
            formats,
            format_for(formats).extension,
            format_for(formats, config["keys.format.class"]).extension if keys else None,
            format_for(formats, config["headers.format.class"]).extension if headers else None,
            config["keys.format.class"] if keys else None,
            config["headers.format.class"] if headers else None,
            config["key.converter"],
            config["value.converter"],
            config["offset.storage.dynamodb.table"],
            config["s3.region"],
            config["sink.lease.duration.ms"],
            SourceSettings.from_config(config),
            one_stream,
            folder_router(config, "a restore"),
        )

    def target_source(self, bootstrap_servers: str | None) -> SourceSettings:
        """The Kafka settings of the target: the connector's, or a plain connection to `bootstrap_servers`
        (`--target-bootstrap-servers`, for local use: no client overrides, no authentication)."""
        if bootstrap_servers is None:
            return self.source
        return replace(
            self.source,
            bootstrap_servers=tuple(bootstrap_servers.split(",")),
            consumer_overrides={},
            top_level_security={},
            worker_security={},
            kafka_api_key=None,
            kafka_api_secret=None,
        )

    def not_restored(self) -> list[str]:
        """What the backup does not hold, so the restored records lack it (empty for EnvelopeFormat, which holds
        every field): each with the key that decides it."""
        if self.formats.format_class == "envelope":
            return []
        missing = [
            f"timestamps ({self.formats.format_class} objects hold none: the records get the time they are produced;"
            " back up with EnvelopeFormat to keep them)"
        ]
        if self.keys_extension is None:
            missing.append("keys (store.kafka.keys was off: no keys sidecars, so every key is null)")
        if self.headers_extension is None:
            missing.append("headers (store.kafka.headers was off: no headers sidecars)")
        return missing
