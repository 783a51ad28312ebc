"""Checks of the partitioning and rotation keys at parse time, so that a bad `path.format`, `locale`,
`timezone` or field list fails `validate` on the driver rather than inside a Spark task."""
from __future__ import annotations


def check_partitioning_settings(config) -> None:
    """Raises ConfigError naming the key at fault."""
    from sink_engine.partition.joda_format import parse_locale
    from sink_engine.partition.registry import partitioner_for
    from sink_engine.partition.time_buckets import parse_zone

    parse_zone(config["timezone"])
    parse_locale(config["locale"])
    partitioner_for(config)
