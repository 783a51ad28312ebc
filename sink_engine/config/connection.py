"""Checks of the connection keys at parse time: credentials that come in pairs, and the Kafka client's
authentication (built once here, so that `validate` and `cdk synth` refuse what a run would refuse)."""
from __future__ import annotations

from sink_engine.errors import ConfigError

PAIRS = (("aws.access.key.id", "aws.secret.access.key"), ("kafka.api.key", "kafka.api.secret"))


def check_connection_settings(config) -> None:
    """Raises ConfigError naming the key at fault."""
    from sink_engine.source.client_config import kafka_authentication

    for first, second in PAIRS:
        if bool(config[first]) != bool(config[second]):
            missing = second if config[first] else first
            raise ConfigError(missing, f"is required with {first if missing == second else second}")
    kafka_authentication(config)
