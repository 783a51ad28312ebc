"""The dead-letter keys, read once from the config: what the router, its destinations and the replay are built
from."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.source.settings import SourceSettings


@dataclass(frozen=True)
class DeadLetterSettings:
    connector: str  # name
    tolerates: bool  # errors.tolerance is all
    log: bool  # errors.log.enable
    log_messages: bool  # errors.log.include.messages
    topic: str | None  # errors.deadletterqueue.topic.name
    replication_factor: int  # errors.deadletterqueue.topic.replication.factor
    context_headers: bool  # errors.deadletterqueue.context.headers.enable
    s3_prefix: str | None  # errors.deadletterqueue.s3.prefix
    bucket: str  # s3.bucket.name, which holds the S3 prefix
    directory_delim: str  # directory.delim and file.delim: the S3 objects' key parts
    file_delim: str
    offset_pad_width: int  # filename.offset.zero.pad.width
    offsets_table: str  # offset.storage.dynamodb.table: the topic destination's scan position, replay claims
    region: str  # s3.region, the DynamoDB client's when the environment names none
    source: SourceSettings  # the Kafka connection the topic destination and replay share with the reader

    @classmethod
    def from_config(cls, config: SinkConfig) -> DeadLetterSettings:
        return cls(
            config.name,
            config["errors.tolerance"] == "all",
            config["errors.log.enable"],
            config["errors.log.include.messages"],
            config["errors.deadletterqueue.topic.name"],
            config["errors.deadletterqueue.topic.replication.factor"],
            config["errors.deadletterqueue.context.headers.enable"],
            config["errors.deadletterqueue.s3.prefix"],
            config["s3.bucket.name"],
            config["directory.delim"],
            config["file.delim"],
            config["filename.offset.zero.pad.width"],
            config["offset.storage.dynamodb.table"],
            config["s3.region"],
            SourceSettings.from_config(config),
        )
