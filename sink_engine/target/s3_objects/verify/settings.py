"""The keys verify reads, once, from the connector's config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sink_engine.config import SinkConfig
from sink_engine.format.registry import format_for
from sink_engine.format.settings import FormatSettings
from sink_engine.storage.naming import ObjectNaming
from sink_engine.transform.settings import TransformSettings


@dataclass(frozen=True)
class VerifySettings:
    connector: str  # name
    bucket: str  # s3.bucket.name
    naming: ObjectNaming  # topics.dir, directory.delim, file.delim, filename.offset.zero.pad.width
    formats: FormatSettings
    extension: str  # the data objects' extension
    tagged: bool  # s3.object.tagging
    contiguous: bool  # one file stream per topic-partition: DefaultPartitioner, tombstones not in their own files,
    # and values of several schemas never open at once (`one_file_stream`)
    folder_of: Callable[[str], str]  # the topic whose folder holds a topic's objects (RegexRouters)
    letters: ObjectNaming | None  # errors.deadletterqueue.s3.prefix, when dead letters are objects
    letters_topic: str | None  # errors.deadletterqueue.topic.name: read with --kafka, else counted, not placed

    @classmethod
    def from_config(cls, config: SinkConfig) -> VerifySettings:
        """Raises ConfigError for what verify cannot read: routers that route by record."""
        router = folder_router(config, "verify")
        naming = ObjectNaming.from_config(config)
        formats = FormatSettings.from_config(config)
        prefix = config["errors.deadletterqueue.s3.prefix"]
        letters = (
            ObjectNaming(prefix.strip("/"), naming.directory_delim, naming.file_delim, naming.pad_width)
            if prefix
            else None
        )
        return cls(
            config.name,
            config["s3.bucket.name"],
            naming,
            formats,
            format_for(formats).extension,
            config["s3.object.tagging"],
            one_file_stream(config),
            router,
            letters,
            config["errors.deadletterqueue.topic.name"] or None,
        )


def folder_router(config: SinkConfig, reader: str) -> Callable[[str], str]:
    """The topic whose folder holds a topic's objects (RegexRouters; the identity without routers). ConfigError
    naming the router when one routes by record: `reader` (a command) could not name the folders."""

    return TransformSettings.from_config(config).required_topic_router(
        f"routes by record (a TimestampRouter, or a router behind a predicate), so {reader} cannot name the "
        "folders it writes under"
    )


def one_file_stream(config: SinkConfig) -> bool:
    """Whether a topic-partition's files follow each other (each owns the offsets up to the next one's start): the
    DefaultPartitioner, tombstones not in files of their own, and no open files per schema (values with a schema
    under schema.compatibility NONE and sink.schema.files separate keep a file open per schema, whose offsets
    interleave with the others'; EnvelopeFormat converts no value, so it has none)."""
    schemas = config["format.class"] != "envelope" and (
        config["value.converter"] != "json" or config["value.converter.schemas.enable"]
    )
    per_schema = (
        schemas
        and config["value.converter"] not in ("string", "bytearray")
        and config["schema.compatibility"] == "none"
        and config["sink.schema.files"] == "separate"
    )
    return config["partitioner.class"] == "default" and config["behavior.on.null.values"] != "write" and not per_schema
