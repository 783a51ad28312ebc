"""The trigger's copy of the scheduled-rotation boundary agrees with the engine's, over many instants and zones."""
import random
from datetime import datetime, timezone

import pytest

from lambdas.trigger.schedule import next_rotation_ms, parse_zone
from sink_engine.driver.wall_clock import next_rotation_ms as engine_next_rotation_ms
from sink_engine.partition.time_buckets import parse_zone as engine_zone

ZONES = ["UTC", "Europe/Paris", "America/New_York", "America/Sao_Paulo", "America/Havana", "America/Santiago",
         "Asia/Kolkata", "Asia/Tehran", "Australia/Lord_Howe", "Pacific/Chatham", "+05:30", "-03:00", "+14:00"]
INTERVALS = [60_000, 7 * 60_000, 600_000, 3_600_000, 5_400_000, 13 * 3_600_000, 86_400_000]
DST_DAYS = [datetime(2026, 3, 8, tzinfo=timezone.utc), datetime(2026, 3, 29, tzinfo=timezone.utc),
            datetime(2026, 10, 25, tzinfo=timezone.utc), datetime(2026, 11, 1, tzinfo=timezone.utc),
            datetime(2026, 4, 5, tzinfo=timezone.utc), datetime(2026, 9, 6, tzinfo=timezone.utc)]


def _instants(seed: int) -> list[int]:
    """Random instants over 1970-2096, and every 7 minutes around days when zones change their offset."""
    rng = random.Random(seed)
    around = [int(day.timestamp() * 1000) + m * 7 * 60_000 for day in DST_DAYS for m in range(-210, 420)]
    return [rng.randint(0, 4_000_000_000_000) for _ in range(1_500)] + around


@pytest.mark.parametrize("zone", ZONES)
def test_boundaries_agree_with_the_engine(zone):
    mine, engines = parse_zone(zone, "c"), engine_zone(zone)
    for i, now in enumerate(_instants(len(zone))):
        interval = INTERVALS[i % len(INTERVALS)]
        assert next_rotation_ms(now, interval, mine) == engine_next_rotation_ms(now, interval, engines), (now, interval)
