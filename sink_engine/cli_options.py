"""The options every command that reads a connector takes (`--config` and `--worker`; `run` and `validate` take
several connectors: `--config` more than once, `--config-dir`), and the parser that refuses a single-valued option
given twice (argparse keeps the last one silently)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sink_engine.config.worker import WORKER_OPTION
from sink_engine.errors import OptionError

MANY_CONFIGS = ("run", "validate")  # the commands that take several connectors


class CommandParser(argparse.ArgumentParser):
    """An argument parser (its sub-commands' too) whose single-valued options refuse a second value: `--topic a
    --topic b` exits 2 naming the option rather than keeping `b`. Flags (`store_true`) given twice mean the same and
    are taken; options declared with `action="append"` take every value."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)


class _StoreOnce(argparse._StoreAction):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        given = namespace.__dict__.setdefault("_options_given", set())
        if self.dest in given:
            more = f"; {' and '.join(MANY_CONFIGS)} take several" if self.dest == "config" else ""
            parser.error(f"argument {'/'.join(self.option_strings)}: given more than once (it takes one value{more})")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def add_config_options(parser: argparse.ArgumentParser, many: bool = False) -> None:
    """`--config` (once; with `many`, once per connector, and `--config-dir`) and `--worker`."""
    if many:
        parser.add_argument(
            "--config",
            action="append",
            default=[],
            help="connector JSON: a path or s3://bucket/key; give it once per connector",
        )
        parser.add_argument("--config-dir", metavar="DIR", help="every *.json in DIR (by name) is a connector too")
    else:
        parser.add_argument("--config", required=True, help="connector JSON: a path or s3://bucket/key")
    parser.add_argument(
        WORKER_OPTION,
        metavar="FILE",
        help="Kafka Connect worker properties (connect-distributed.properties): bootstrap.servers, security.protocol, "
        "sasl.*, ssl.*, consumer.* (default: the CONNECT_* environment variables, e.g. CONNECT_BOOTSTRAP_SERVERS); "
        "for every connector of the command",
    )


def config_locations(args: argparse.Namespace) -> list[str]:
    """The connector files of a command that takes several: each `--config` in order, then `--config-dir`'s *.json
    sorted by name. OptionError when there are none, or a location is given twice."""
    locations = list(args.config)
    if args.config_dir:
        folder = Path(args.config_dir)
        if not folder.is_dir():
            raise OptionError("--config-dir", f"{folder} is not a directory")
        found = sorted(str(p) for p in folder.glob("*.json") if p.is_file())
        if not found:
            raise OptionError("--config-dir", f"{folder} holds no *.json file")
        locations += found
    if not locations:
        raise OptionError("--config", "give at least one connector: --config FILE or --config-dir DIR")
    twice = sorted({location for location in locations if locations.count(location) > 1})
    if twice:
        raise OptionError("--config", f"{', '.join(twice)} given more than once")
    return locations
