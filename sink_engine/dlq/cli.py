"""`sink-engine dlq replay`: the replay service on the command line (the same as the dlq_replay Lambda)."""

from __future__ import annotations

import argparse
import json

from sink_engine.aws import S3Access, dynamodb_client, s3_client
from sink_engine.cli_options import add_config_options
from sink_engine.config import SinkConfig
from sink_engine.dlq.replay import replay
from sink_engine.dlq.replay_request import request_from_payload
from sink_engine.dlq.settings import DeadLetterSettings

HELP = "replay dead letters into Kafka, each at most once; prints the summary as JSON"


def add_parser(commands: argparse._SubParsersAction) -> None:
    dlq = commands.add_parser("dlq", help="dead-letter queue tools", description="dead-letter queue tools")
    actions = dlq.add_subparsers(dest="dlq_command", required=True)
    replay = actions.add_parser("replay", help=HELP, description=HELP)
    add_config_options(replay)
    source = replay.add_mutually_exclusive_group()
    source.add_argument("--source-topic", help="dead-letter topic (default: the connector's)")
    source.add_argument("--source-s3-prefix", help="dead-letter prefix in s3.bucket.name (default: the connector's)")
    for name, text in (
        ("--from-offset", "original offsets from (inclusive)"),
        ("--to-offset", "... to (exclusive)"),
        ("--partition", "only records of this original partition"),
        ("--max-records", "replay at most this many records"),
    ):
        replay.add_argument(name, type=int, help=text)
    replay.add_argument("--from-time", help="original timestamps from: epoch ms or ISO-8601 (inclusive)")
    replay.add_argument("--to-time", help="... to (exclusive)")
    replay.add_argument("--error-class", action="append", default=[], help="only this error class (repeatable)")
    replay.add_argument("--topic", help="only records of this original topic")
    replay.add_argument("--target-topic", help="produce here instead of each record's original topic")
    replay.add_argument("--dry-run", action="store_true", help="count what would be replayed; change nothing")


def payload_from_args(args: argparse.Namespace, connector: str) -> dict:
    """The Lambda payload that these options describe."""

    def some(**values: object) -> dict:
        return {k: v for k, v in values.items() if v is not None and v != []}

    return some(
        connector=connector,
        dry_run=args.dry_run,
        max_records=args.max_records,
        source=some(topic=args.source_topic, s3_prefix=args.source_s3_prefix),
        window=some(
            from_offset=args.from_offset,
            to_offset=args.to_offset,
            from_time=_time(args.from_time),
            to_time=_time(args.to_time),
        ),
        filters=some(error_classes=args.error_class, topic=args.topic, partition=args.partition),
        target=some(topic=args.target_topic),
    )


def run(config: SinkConfig, args: argparse.Namespace) -> int:

    settings = DeadLetterSettings.from_config(config)
    request = request_from_payload(payload_from_args(args, config.name), settings)
    summary = replay(settings, request, dynamodb_client(settings.region), s3_client(S3Access.from_config(config)))
    print(json.dumps(summary.to_dict(), indent=2))
    return 0


def _time(value: str | None) -> int | str | None:
    return int(value) if value is not None and value.isdigit() else value
