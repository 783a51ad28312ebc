"""The replay use case behind the Lambda: find the connector's config, validate the payload, replay.

The replay itself is `sink_engine.dlq.replay`, shared with `sink-engine dlq replay`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from sink_engine.config import SinkConfig
from sink_engine.config.worker import read_worker
from sink_engine.dlq.replay import replay
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.settings import DeadLetterSettings
from sink_engine.errors import ConfigError
from sink_engine.source.msk_brokers import kafka_client, with_cluster_brokers
from sink_engine.validation import load_checked_config

if TYPE_CHECKING:
    from sink_engine.aws_types import DynamoDBClient, S3Client


def load_deployed(uri: str, s3: S3Client) -> SinkConfig:
    """A deployed connector's config as its job reads it: its brokers, when its file names none, those MSK gives for
    the environment's cluster (SINK_MSK_CLUSTER_ARN, set on the function: sink_engine/config/worker.py)."""
    return with_cluster_brokers(load_checked_config(uri, s3, worker=read_worker(None, os.environ)), kafka_client)


class ReplayService:
    """`config_uris` gives the deployed connectors' config URIs by name whenever asked (the connector index's
    `get`: its copy, read again once it is older than the TTL)."""

    def __init__(
        self,
        config_uris: Callable[[], Mapping[str, str]],
        dynamodb: DynamoDBClient,
        s3: S3Client,
        clock: Callable[[], int],
        load: Callable[[str, S3Client], SinkConfig] = load_deployed,
    ) -> None:
        self._config_uris, self._db, self._s3, self._clock, self._load = config_uris, dynamodb, s3, clock, load

    def handle(self, payload: dict) -> dict:
        """The summary of the replay (counts by error class); ConfigError names a payload field at fault.
        Kafka, S3 or DynamoDB failures raise (SinkError): what was claimed before them is reported in doubt
        by the next invocation, nothing is replayed twice."""
        name, deployed = payload.get("connector"), self._config_uris()
        if name is None or name not in deployed:
            raise ConfigError("connector", f"{name!r} is not a deployed connector ({', '.join(sorted(deployed))})")
        settings = DeadLetterSettings.from_config(self._load(deployed[name], self._s3))
        request = request_from_payload(payload, settings)
        summary = replay(settings, request, self._db, self._s3, self._clock)
        source = {"topic": request.source_topic} if request.source_topic else {"s3_prefix": request.source_s3_prefix}
        return {"connector": name, "source": source, **summary.to_dict()}


def config_uris(entries: list[dict]) -> dict[str, str]:
    """Connector name -> config URI, from the entries of the connector index (the trigger's: {name, topics,
    config_uri, ...}); ValueError names an entry without a config_uri."""
    missing = [e["name"] for e in entries if not isinstance(e.get("config_uri"), str)]
    if missing:
        raise ValueError(f"entries of {', '.join(map(repr, missing))} lack a config_uri")
    return {e["name"]: e["config_uri"] for e in entries}
