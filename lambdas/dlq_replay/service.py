"""The replay use case behind the Lambda: find the connector's config, validate the payload, replay.

The replay itself is `sink_engine.dlq.replay`, shared with `sink-engine dlq replay`.
"""
from __future__ import annotations

import json
from typing import Callable, Mapping

from sink_engine.config import SinkConfig, load_config
from sink_engine.dlq.replay import replay
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.errors import ConfigError


class ReplayService:
    def __init__(self, config_uris: Mapping[str, str], dynamodb, s3, clock: Callable[[], int],
                 load: Callable[..., SinkConfig] = load_config):
        self._config_uris, self._db, self._s3, self._clock, self._load = config_uris, dynamodb, s3, clock, load

    def handle(self, payload: dict) -> dict:
        """The summary of the replay (counts by error class); ConfigError names a payload field at fault.
        Kafka, S3 or DynamoDB failures raise (SinkError): what was claimed before them is reported in doubt
        by the next invocation, nothing is replayed twice."""
        name = payload.get("connector")
        if name not in self._config_uris:
            raise ConfigError("connector", f"{name!r} is not a deployed connector ({', '.join(sorted(self._config_uris))})")
        config = self._load(self._config_uris[name], self._s3)
        request = request_from_payload(payload, config)
        summary = replay(config, request, self._db, self._s3, self._clock)
        source = {"topic": request.source_topic} if request.source_topic else {"s3_prefix": request.source_s3_prefix}
        return {"connector": name, "source": source, **summary.to_dict()}


def config_uris_from_json(text: str) -> dict[str, str]:
    """The CONNECTORS environment value (as the trigger's): a JSON list of {name, topics, config_uri}."""
    return {c["name"]: c["config_uri"] for c in json.loads(text)}
