"""Checks of the dead-letter settings that span several keys (`errors.*`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sink_engine.errors import ConfigError

if TYPE_CHECKING:
    from sink_engine.config import SinkConfig


def check_dead_letter_settings(config: SinkConfig) -> None:
    """One destination at most; it must not feed the sink its own dead letters or mix them with the data."""
    topic, prefix = config["errors.deadletterqueue.topic.name"], config["errors.deadletterqueue.s3.prefix"]
    if topic and prefix:
        raise ConfigError(
            "errors.deadletterqueue.s3.prefix",
            "set either errors.deadletterqueue.topic.name or errors.deadletterqueue.s3.prefix, not both",
        )
    if topic and config.topic_matches(topic):
        raise ConfigError(
            "errors.deadletterqueue.topic.name",
            f"{topic} is one of the topics this connector reads; dead letters would loop",
        )
    if prefix and prefix.strip("/") == config["topics.dir"].strip("/"):
        raise ConfigError("errors.deadletterqueue.s3.prefix", f"{prefix} is topics.dir; pick a prefix of its own")
