"""TimeBasedPartitioner, DailyPartitioner and HourlyPartitioner: the record's time bucket, formatted by
`path.format` in `timezone` and `locale` (see time_buckets.py for the bucket math, joda_format.py for the
pattern language)."""

from __future__ import annotations

from sink_engine.errors import ConfigError
from sink_engine.partition.fields import FieldError
from sink_engine.partition.joda_format import compile_pattern, parse_locale
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_buckets import TimeBuckets, parse_zone
from sink_engine.partition.timestamps import TimestampExtractor
from sink_engine.records import Partitions, RecordChunk, ValueColumn

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


def fixed_layout(kind: str, delim: str) -> tuple[str, int]:
    """`path.format` and `partition.duration.ms` of DailyPartitioner and HourlyPartitioner."""
    days = delim.join(("'year'=YYYY", "'month'=MM", "'day'=dd"))
    return (days, DAY_MS) if kind == "daily" else (days + delim + "'hour'=HH", HOUR_MS)


def time_buckets(settings: PartitionSettings) -> TimeBuckets:
    """The buckets of the configured time partitioner; ConfigError naming the key at fault."""
    delim = settings.directory_delim
    if settings.partitioner in ("daily", "hourly"):
        pattern, duration = fixed_layout(settings.partitioner, delim)
    else:
        pattern, duration = settings.path_format or "", settings.duration_ms
        if duration <= 0:
            raise ConfigError(
                "partition.duration.ms",
                "must be a positive number of milliseconds for this partitioner, e.g. 3600000 for hourly buckets",
            )
        if not pattern.strip() or pattern == delim:
            raise ConfigError("path.format", "is required by this partitioner, e.g. 'year'=YYYY/'month'=MM")
        if delim and pattern.endswith(delim):
            pattern = pattern[: -len(delim)]
    zone = parse_zone(settings.timezone)
    return TimeBuckets(duration, zone, compile_pattern(pattern, parse_locale(settings.locale)))


class TimeBasedPartitioner:
    """`Partitions.one` when the whole chunk falls in one bucket (the common case for ordered data), else one per
    record."""

    def __init__(self, buckets: TimeBuckets, extractor: TimestampExtractor) -> None:
        self.buckets, self.extractor = buckets, extractor

    def encode(self, chunk: RecordChunk, values: ValueColumn) -> Partitions:
        stamps = self.extractor.extract(chunk, values)
        path = self.buckets.path
        try:
            paths = [path(stamp) for stamp in stamps]
        except (ValueError, OverflowError, OSError):
            self._raise_out_of_range(chunk, stamps)
        first = paths[0]
        return Partitions.one(first) if paths.count(first) == len(paths) else Partitions.per_record(paths)

    def _raise_out_of_range(self, chunk: RecordChunk, stamps: list) -> None:
        """FieldError naming the first record whose time has no calendar date (before year 1, after 9999)."""
        for i, stamp in enumerate(stamps):
            try:
                self.buckets.path(stamp)
            except (ValueError, OverflowError, OSError):
                raise FieldError(
                    chunk.topic,
                    chunk.partition,
                    chunk.offsets[i],
                    self.extractor.field,
                    f"time {stamp} ms is outside the years 1 to 9999",
                ) from None
