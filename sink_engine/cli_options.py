"""The options every command that reads a connector takes: `--config` and `--worker`."""

from __future__ import annotations

import argparse

from sink_engine.config.worker import WORKER_OPTION


def add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="connector JSON: a path or s3://bucket/key")
    parser.add_argument(
        WORKER_OPTION,
        metavar="FILE",
        help="Kafka Connect worker properties (connect-distributed.properties): bootstrap.servers, security.protocol, "
        "sasl.*, ssl.*, consumer.* (default: the CONNECT_* environment variables, e.g. CONNECT_BOOTSTRAP_SERVERS)",
    )
