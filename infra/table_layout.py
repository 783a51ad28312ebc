"""Partition projection of a connector's key layout, for its Athena (Glue) tables.

Each partitioner's encoded partition becomes partition columns that Athena projects, and a
`storage.location.template` that turns their values back into the engine's key prefixes
(`<topics.dir>/<topic>/<encoded partition>/`, see sink_engine/storage/naming.py):

- DefaultPartitioner: `partition` (int), `integer` projection over 0..kafka_partitions-1, `partition=${partition}`.
- FieldPartitioner: one string column per field of `partition.field.name` (`a.b` becomes `a_b`), segment
  `<field>=${column}`. With the field's values declared in the settings (`catalog.tables.<topic>.field_values`),
  an `enum` projection of those values (escaped as the engine escapes them); without, an `injected` projection:
  Athena then needs one equality on each such column in every query (`WHERE region = 'eu'`) and puts the
  literal in the location as it is, so a value the engine escaped (`a/b` lands as `a%2Fb`) is queried escaped.
- TimeBasedPartitioner, DailyPartitioner, HourlyPartitioner: one string column `time_bucket` with a `date`
  projection whose format is `path.format` turned from Joda's pattern language into the Java DateTimeFormatter
  pattern Athena formats with (literals quoted, `Y`/`y` to `y`, names in English only). The step is
  `partition.duration.ms` when it is a whole number of the pattern's finest unit (2 HOURS for 2-hour buckets of
  `...HH`), else one finest unit, so that each path the engine can write is projected once. The column's value
  is the path text itself (`year=2024/month=01/day=15`): queries compare it as text of that form.
  Athena projects dates in UTC, while the engine's paths are local times in `timezone`: the range runs from
  `catalog.time_range_start` (local midnight, floored to its bucket) to NOW plus the zone's largest UTC offset,
  so the bucket under way in the zone is included.
- FieldAndTimeBasedPartitioner: the field columns, then `time_bucket`.

Layouts Athena cannot project are refused (ConnectorSpecError naming the key): a `directory.delim` other than
`/` (Athena reads a partition from a folder), a `path.format` whose fields do not name one instant from the year
down (`'hour'=HH` alone, week years, zones, `C`, `e`), or pattern widths Java refuses (`ddd`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from infra.errors import ConnectorSpecError, SettingsError
from sink_engine.config import SinkConfig
from sink_engine.errors import ConfigError
from sink_engine.format import FormatSettings, format_for
from sink_engine.partition.fields import Escaper
from sink_engine.partition.joda_format import JavaRootLocale, compile_pattern, parse_locale
from sink_engine.partition.joda_format import _tokens as joda_tokens  # the engine's own reading of the pattern
from sink_engine.partition.settings import PartitionSettings
from sink_engine.partition.time_based import fixed_layout, time_buckets
from sink_engine.storage.naming import ObjectNaming

PARTITION_COLUMN = "partition"
TIME_COLUMN = "time_bucket"

# Units of time from the coarsest, as Athena's `interval.unit` (Java ChronoUnit) names them.
UNITS = ("YEARS", "MONTHS", "DAYS", "HOURS", "MINUTES", "SECONDS", "MILLISECONDS")
_UNIT_MS = {"DAYS": 86_400_000, "HOURS": 3_600_000, "MINUTES": 60_000, "SECONDS": 1_000, "MILLISECONDS": 1}

# Joda letter -> (Java letter, the unit it fixes or None, largest width Java accepts or None for any).
_LETTERS = {
    "Y": ("y", "YEARS", None),
    "y": ("y", "YEARS", None),
    "M": ("M", "MONTHS", None),
    "d": ("d", "DAYS", 2),
    "D": ("D", "DAYS", 3),
    "H": ("H", "HOURS", 2),
    "k": ("k", "HOURS", 2),
    "K": ("K", "HOURS", 2),
    "h": ("h", "HOURS", 2),
    "m": ("m", "MINUTES", 2),
    "s": ("s", "SECONDS", 2),
    "S": ("S", "MILLISECONDS", 9),
    "a": ("a", None, None),
    "E": ("E", None, None),
    "G": ("G", None, None),
}
_TEXT_LETTERS = ("a", "E", "G")  # and M from three letters: names in the locale


@dataclass(frozen=True)
class PartitionColumn:
    name: str
    projection: dict[str, str]  # Athena's projection.<name>.<key> table parameters, keyed by <key>
    type: str = "string"
    field: str | None = None  # the partitioning field whose values it holds (FieldPartitioner)


@dataclass(frozen=True)
class Layout:
    """The partition columns of a topic's table, its location and the template of its partitions' locations."""

    columns: tuple[PartitionColumn, ...]
    location: str
    template: str

    def parameters(self) -> dict[str, str]:
        """The table parameters that turn partition projection on for this layout."""
        parameters = {"projection.enabled": "true", "storage.location.template": self.template}
        for column in self.columns:
            parameters.update({f"projection.{column.name}.{k}": v for k, v in column.projection.items()})
        return parameters


@dataclass(frozen=True)
class TimeProjection:
    """A `date` projection: Java pattern, range and step."""

    format: str
    range_start: str
    range_end: str
    interval: int
    unit: str

    def projection(self) -> dict[str, str]:
        return {
            "type": "date",
            "format": self.format,
            "range": f"{self.range_start},{self.range_end}",
            "interval": str(self.interval),
            "interval.unit": self.unit,
        }


def layout(
    config: SinkConfig,
    topic: str,
    bucket: str,
    *,
    source: str,
    kafka_partitions: int,
    field_values: dict[str, tuple[str, ...]],
    time_range_start: date,
    settings_source: str,
) -> Layout:
    """The projected layout of `topic`'s objects as `config` writes them in `bucket`. Raises ConnectorSpecError
    naming the key of `source` (the connector file) that Athena cannot project, and SettingsError for
    field values (`catalog.tables.<topic>.field_values` of `settings_source`) that cannot be enum values."""
    partitioning, naming = PartitionSettings.from_config(config), ObjectNaming.from_config(config)
    delim = naming.directory_delim
    if delim != "/":
        raise ConnectorSpecError(
            source,
            "directory.delim",
            f"{delim!r}: Athena reads each partition from a folder "
            "(a prefix ending in '/'), so keys whose segments are joined otherwise get no table",
        )
    kind = partitioning.partitioner
    columns: list[PartitionColumn] = []
    segments: list[str] = []
    if kind == "default":
        columns.append(
            PartitionColumn(PARTITION_COLUMN, {"type": "integer", "range": f"0,{kafka_partitions - 1}"}, "int")
        )
        segments.append(f"partition=${{{PARTITION_COLUMN}}}")
    if kind in ("field", "fieldtime"):
        for name, column in field_columns(partitioning.field_names or (), source).items():
            values = field_values.get(name)
            columns.append(
                PartitionColumn(column, _field_projection(values, delim, topic, name, settings_source), field=name)
            )
            segments.append(f"{name}=${{{column}}}")
    if kind in ("time", "daily", "hourly", "fieldtime"):
        columns.append(PartitionColumn(TIME_COLUMN, time_projection(config, time_range_start, source).projection()))
        segments.append(f"${{{TIME_COLUMN}}}")
    prefix = delim.join(part for part in (naming.topics_dir, topic) if part)  # as ObjectNaming.key joins
    location = f"s3://{bucket}/{prefix}{delim}"
    return Layout(tuple(columns), location, location + delim.join(segments) + delim)


def data_objects(config: SinkConfig) -> str:
    """A regular expression, read alike by Java (Athena's `regexp_like`) and Python, that finds the key of a data
    object and of no object beside it (`<stem>.index.json` of Block-GZIP, `<stem>.keys<ext>`, `<stem>.headers<ext>`):
    `<file.delim><partition><file.delim><offset><extension>` at the end."""
    delim = re.escape(ObjectNaming.from_config(config).file_delim)
    return f"{delim}[0-9]+{delim}[0-9]+{re.escape(format_for(FormatSettings.from_config(config)).extension)}$"


def field_columns(names, source: str) -> dict[str, str]:
    """Field name -> partition column name (lower case, `.` and other characters outside [a-z0-9_] as `_`)."""
    columns: dict[str, str] = {}
    for name in names:
        column = re.sub(r"[^a-z0-9_]", "_", name.lower())
        if column in columns.values():
            raise ConnectorSpecError(source, "partition.field.name", f"fields give the column {column!r} twice")
        columns[name] = column
    return columns


def _field_projection(values, delim: str, topic: str, field: str, settings_source: str) -> dict[str, str]:
    if not values:
        return {"type": "injected"}
    escaper = Escaper(delim)
    escaped = [escaper.escape(v) for v in values]
    for value in escaped:
        if "," in value:
            raise SettingsError(
                settings_source,
                f"catalog.tables.{topic}.field_values.{field}",
                f"{value!r}: an enum projection's values are comma-separated, so none may hold a comma",
            )
    return {"type": "enum", "values": ",".join(escaped)}


def time_pattern(partitioning: PartitionSettings) -> str:
    """The Joda pattern of the configured time partitioner, as sink_engine.partition.time_based reads it."""
    delim = partitioning.directory_delim
    if partitioning.partitioner in ("daily", "hourly"):
        return fixed_layout(partitioning.partitioner, delim)[0]
    pattern = partitioning.path_format or ""
    return pattern[: -len(delim)] if delim and pattern.endswith(delim) else pattern


def java_pattern(joda: str, locale: str, source: str) -> tuple[str, str]:
    """The Java DateTimeFormatter pattern that formats as the Joda pattern does, and its finest unit. A `locale`
    Java has no data for writes root names (joda_format.JavaRootLocale): abbreviations at every width, which
    the Athena pattern then asks for."""
    root = isinstance(parse_locale(locale), JavaRootLocale)
    parts, letters = [], set()
    units: set[str] = set()
    literal = ""
    try:
        tokens = list(joda_tokens(joda))
    except ConfigError as e:
        raise ConnectorSpecError(source, "path.format", str(e)) from None
    for kind, text in tokens:
        if kind == "literal":
            literal += text
            continue
        if literal:
            parts.append(_quoted(literal))
            literal = ""
        parts.append(_java_field(text[0], min(len(text), 3) if root and text[0] in "ME" else len(text), source))
        letters.add(text[0])
        if unit := _LETTERS[text[0]][1]:
            units.add(unit)
    if literal:
        parts.append(_quoted(literal))
    if (
        letters & set(_TEXT_LETTERS) or any(k == "field" and t[0] == "M" and len(t) >= 3 for k, t in tokens)
    ) and parse_locale(locale).language != "en":  # English, or root names (English abbreviations)
        raise ConnectorSpecError(
            source,
            "locale",
            f"{locale!r}: path.format {joda!r} writes names, and Athena's date projection parses them in English only",
        )
    if root and "G" in letters:
        raise ConnectorSpecError(
            source,
            "locale",
            f"{locale!r}: Java has no data for this language, so the era (G) "
            "is written CE/BCE, which Athena's English date projection does not parse (AD/BC)",
        )
    if letters & {"h", "K"} and "a" not in letters:
        raise ConnectorSpecError(
            source,
            "path.format",
            f"{joda!r}: a 12-hour field (h, K) without AM/PM (a) does not name one hour, so Athena cannot project it",
        )
    finest = _finest(units, letters, joda, source)
    return "".join(parts), finest


def _java_field(letter: str, count: int, source: str) -> str:
    if letter not in _LETTERS:
        raise ConnectorSpecError(
            source,
            "path.format",
            f"the field {letter * count!r} has no counterpart in Athena's "
            "date projection (Java DateTimeFormatter); use Y/y M d D H k K h m s S a E G",
        )
    java, _, widest = _LETTERS[letter]
    if letter == "M" and count >= 3:
        return "MMMM" if count >= 4 else "MMM"
    if letter == "E":
        return "EEEE" if count >= 4 else "EEE"
    if letter in ("a", "G"):
        return java
    if widest is not None and count > widest:
        raise ConnectorSpecError(
            source,
            "path.format",
            f"{letter * count!r}: Java's DateTimeFormatter, which Athena's "
            f"date projection uses, allows at most {widest} {letter!r}",
        )
    return java * count


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _finest(units: set[str], letters: set[str], joda: str, source: str) -> str:
    """The finest unit of a pattern whose fields fix every unit from the year down to it (D fixes month and day)."""
    if "D" in letters:
        units = units | {"MONTHS"}
    chain = [u for u in UNITS if u in units]
    if not chain or chain != list(UNITS[: len(chain)]):
        raise ConnectorSpecError(
            source,
            "path.format",
            f"{joda!r}: Athena's date projection needs fields that name "
            "one instant from the year down (year; year and month; ...; down to the "
            f"finest); this pattern fixes {', '.join(chain) or 'no unit'}",
        )
    return chain[-1]


def time_projection(config: SinkConfig, start: date, source: str) -> TimeProjection:
    """The `date` projection of the connector's time path (see the module doc)."""
    partitioning = PartitionSettings.from_config(config)
    try:
        buckets = time_buckets(partitioning)
    except ConfigError as e:
        raise ConnectorSpecError(source, e.key, str(e)) from None
    pattern, finest = java_pattern(time_pattern(partitioning), partitioning.locale, source)
    duration = buckets.duration_ms
    if finest in _UNIT_MS and duration % _UNIT_MS[finest] == 0:
        unit = next(u for u in _UNIT_MS if duration % _UNIT_MS[u] == 0)
        interval = duration // _UNIT_MS[unit]
    else:
        unit, interval = finest, 1
    # Athena steps through local times as if they were UTC: so does the range start, the bucket floor of the
    # start day's local midnight (buckets are multiples of the duration from the local epoch), formatted as such
    midnight_ms = (start - date(1970, 1, 1)).days * 86_400_000
    floor_ms = midnight_ms - midnight_ms % duration
    first = compile_pattern(time_pattern(partitioning), parse_locale(partitioning.locale))(
        datetime.fromtimestamp(floor_ms / 1000, UTC)
    )
    hours = math.ceil(max_offset_seconds(buckets.zone, start) / 3600)
    return TimeProjection(pattern, first, f"NOW+{hours}HOURS" if hours > 0 else "NOW", interval, unit)


def max_offset_seconds(zone, since: date) -> int:
    """The zone's largest UTC offset (seconds) from `since` to a year from today, at least 0."""
    day, until, largest = since, max(date.today(), since) + timedelta(days=366), 0
    while day <= until:
        moment = datetime(day.year, day.month, day.day, 12, tzinfo=UTC).astimezone(zone)
        offset = moment.utcoffset()
        assert offset is not None  # an aware time
        largest = max(largest, int(offset.total_seconds()))
        day += timedelta(days=7)  # offsets change at most twice a year and last for months
    return largest
