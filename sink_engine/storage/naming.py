"""Object keys, exactly as the Confluent S3 sink names them (but for records a router sent to another topic)."""

from __future__ import annotations

from dataclasses import dataclass

from sink_engine.config import SinkConfig


@dataclass(frozen=True)
class ObjectNaming:
    topics_dir: str
    directory_delim: str
    file_delim: str
    pad_width: int

    @classmethod
    def from_config(cls, config: SinkConfig) -> ObjectNaming:
        return cls(
            config["topics.dir"],
            config["directory.delim"],
            config["file.delim"],
            config["filename.offset.zero.pad.width"],
        )

    def key(
        self,
        topic: str,
        encoded_partition: str,
        partition: int,
        start_offset: int,
        extension: str,
        source_topic: str | None = None,
    ) -> str:
        """`<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<padded start offset><extension>`.

        `topic` is the record's topic after the transforms; when a router changed it, the file name starts with
        `source_topic`, the topic the records were read from, so that two topics routed to one name never write one
        key (the directory is the routed topic's, where Connect puts it)."""
        d, f = self.directory_delim, self.file_delim
        named = source_topic or topic
        name = f"{named}{f}{partition}{f}{start_offset:0{self.pad_width}d}{extension}"
        return d.join(part for part in (self.topics_dir, topic, encoded_partition, name) if part)
