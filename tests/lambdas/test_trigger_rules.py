"""Whether a run would close a file, per topic-partition: a table of cases over the connector's settings."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from lambdas.trigger.errors import TriggerConfigError
from lambdas.trigger.pending import Committed, Seen
from lambdas.trigger.rules import Rotation, closing, partition_reason, worth_saving

MIN = 60_000
T = int(datetime(2026, 3, 2, 10, 3, tzinfo=UTC).timestamp() * 1000)  # 10:03 UTC
COUNT = Rotation(flush_size=1_000)
SCHEDULE = Rotation(flush_size=1_000, schedule_ms=10 * MIN)
KOLKATA_HOURLY = Rotation(flush_size=1_000, schedule_ms=60 * MIN, zone=ZoneInfo("Asia/Kolkata"))  # +05:30
WALLCLOCK = Rotation(flush_size=1_000, interval_ms=5 * MIN, extractor="wallclock")
RECORD = Rotation(flush_size=1_000, interval_ms=5 * MIN, extractor="record")
FIELD = Rotation(flush_size=1_000, interval_ms=5 * MIN, extractor="recordfield")
AT_10_02 = Committed(100, T - MIN)

CASES = [  # id, rotation, seen, committed, now, reason
    ("nothing seen", SCHEDULE, None, AT_10_02, T + 60 * MIN, None),
    ("nothing pending", COUNT, Seen(100), AT_10_02, T, None),
    ("a trickle below flush.size", COUNT, Seen(1_099, 100, T, T), AT_10_02, T + 24 * 60 * MIN, None),
    ("flush.size reached", COUNT, Seen(1_100, 100, T, T), AT_10_02, T, "flush-size"),
    ("the engine committed past what was seen", COUNT, Seen(900, 100, T, T), Committed(1_000, T), T, None),
    ("before the boundary after the last commit", SCHEDULE, Seen(105, 100, T, T), AT_10_02, T + 7 * MIN - 1, None),
    (
        "the boundary after the last commit passed",
        SCHEDULE,
        Seen(105, 100, T, T),
        AT_10_02,
        T + 7 * MIN,
        "scheduled-rotation",
    ),
    ("a boundary passed but nothing pending", SCHEDULE, Seen(100), AT_10_02, T + 60 * MIN, None),
    (
        "hourly in +05:30: boundaries at hh:30 UTC",
        KOLKATA_HOURLY,
        Seen(105, 100, T, T),
        AT_10_02,
        T + 27 * MIN - 1,
        None,
    ),
    (
        "hourly in +05:30: 10:30 UTC passed",
        KOLKATA_HOURLY,
        Seen(105, 100, T, T),
        AT_10_02,
        T + 27 * MIN,
        "scheduled-rotation",
    ),
    ("wallclock interval not yet", WALLCLOCK, Seen(105, 100, T, T), AT_10_02, T + 4 * MIN - 1, None),
    (
        "wallclock interval since the last commit",
        WALLCLOCK,
        Seen(105, 100, T, T),
        AT_10_02,
        T + 4 * MIN,
        "wallclock-interval",
    ),
    ("record times span less than the interval", RECORD, Seen(105, 100, T, T + 5 * MIN - 1), AT_10_02, T, None),
    ("record times span the interval", RECORD, Seen(105, 100, T, T + 5 * MIN), AT_10_02, T, "record-interval"),
    ("span from a record the commit passed", RECORD, Seen(105, 90, T, T + 5 * MIN), AT_10_02, T, None),
    ("RecordField times are inside the values", FIELD, Seen(105, 100, T, T + 60 * MIN), AT_10_02, T, None),
    ("a partition never committed", COUNT, Seen(3, 0, T, T), None, T, "first-run"),
]


@pytest.mark.parametrize("rotation, seen, committed, now, reason", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_partition_reason(rotation, seen, committed, now, reason):
    assert partition_reason(rotation, seen, committed, now) == reason


def test_a_topic_without_any_commit_needs_its_first_run_even_without_records():
    committed = {("orders", 0): AT_10_02}
    assert closing(COUNT, ("orders", "payments"), {}, committed, T) == ("first-run", "payments")
    assert closing(COUNT, ("orders",), {("orders", 0): Seen(100)}, committed, T) is None
    assert closing(
        COUNT,
        ("orders",),
        {("orders", 0): Seen(100), ("orders", 3): Seen(2_000, 0, T, T)},
        {**committed, ("orders", 3): Committed(500, T)},
        T,
    ) == ("flush-size", "orders-3")


def test_rotation_settings_come_from_the_connector_keys():
    entry = {
        "flush.size": 10_000,
        "rotate.schedule.interval.ms": 600_000,
        "rotate.interval.ms": -1,
        "timestamp.extractor": "record",
        "timezone": "Europe/Paris",
    }
    rotation = Rotation.from_entry("orders", entry)
    assert (rotation.flush_size, rotation.schedule_ms, rotation.extractor) == (10_000, 600_000, "record")
    assert rotation.zone == ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(
    "zone, january_offset_hours", [("PST", -8), ("EST", -5), ("+05:30", 5.5), ("UTC", 0), ("Europe/Paris", 1)]
)
def test_the_timezone_is_read_as_a_run_reads_it(zone, january_offset_hours):
    """Java's short ids (ZoneId.SHORT_IDS), IANA ids and offsets, as the engine reads `timezone`."""
    entry = {
        "flush.size": 10,
        "rotate.schedule.interval.ms": 600_000,
        "rotate.interval.ms": -1,
        "timestamp.extractor": "wallclock",
        "timezone": zone,
    }
    zone_read = Rotation.from_entry("orders", entry).zone
    assert zone_read.utcoffset(datetime(2026, 1, 15)) == timedelta(hours=january_offset_hours)


@pytest.mark.parametrize(
    "key, value",
    [
        ("flush.size", 0),
        ("timestamp.extractor", "Wallclock$"),
        ("timezone", "Mars/Olympus"),
        ("rotate.interval.ms", "soon"),
    ],
)
def test_a_bad_rotation_entry_names_connector_and_key(key, value):
    entry = {
        "flush.size": 10,
        "rotate.schedule.interval.ms": -1,
        "rotate.interval.ms": -1,
        "timestamp.extractor": "wallclock",
        "timezone": "UTC",
        key: value,
    }
    with pytest.raises(TriggerConfigError, match="connector 'orders'"):
        Rotation.from_entry("orders", entry)


SAVE_CASES = [  # id, stored, merged, committed, saved
    ("a partition seen for the first time", None, Seen(105, 100, T, T), AT_10_02, True),
    ("more of the same stretch, below flush.size", Seen(300, 100, T, T), Seen(500, 100, T, T + 1), AT_10_02, False),
    ("a first pending record after a commit", Seen(300, 90, T, T), Seen(500, 300, T, T), Committed(300, T), True),
    (
        "flush.size reached (the tick retries if the run cannot start now)",
        Seen(1_000, 100, T, T),
        Seen(1_100, 100, T, T),
        AT_10_02,
        True,
    ),
    ("past flush.size and already stored so", Seen(1_100, 100, T, T), Seen(1_900, 100, T, T), AT_10_02, False),
    ("flush.size more offsets since the stored marker", Seen(1_100, 100, T, T), Seen(2_100, 100, T, T), AT_10_02, True),
]


@pytest.mark.parametrize(
    "stored, merged, committed, saved", [c[1:] for c in SAVE_CASES], ids=[c[0] for c in SAVE_CASES]
)
def test_a_marker_is_written_only_when_it_tells_something_new(stored, merged, committed, saved):
    assert worth_saving(COUNT, stored, merged, committed, T) is saved
