"""What a run that finds the lease held says of its holder: when it lapses, and whether its renewals stopped."""

from __future__ import annotations

import pytest

from sink_engine.offsets.lease import held_error

NOW = 1_800_000_000_000
LEASE_MS = 120_000


@pytest.mark.parametrize("silent_s, stopped", [(5, False), (59, False), (61, True), (100, True)])
def test_a_holder_silent_for_more_than_half_the_lease_has_stopped_renewing(silent_s, stopped):
    # given a holder whose last renewal was silent_s ago (the lease runs a full duration from it)
    alive_at = NOW - silent_s * 1000
    holder = {"owner": "run-1", "epoch": 4, "expires_at_ms": alive_at + LEASE_MS, "alive_at_ms": alive_at}
    # when a run finds it
    error = held_error("orders", holder, NOW)
    # then it says when the lease lapses, in seconds from now, and whether the holder still renews it
    assert error.renewals_stopped is stopped and error.exit_code == 3
    assert f", in {LEASE_MS // 1000 - silent_s} s" in str(error) and "epoch ms" not in str(error)
    if stopped:
        assert f"its renewals stopped {silent_s} s ago, so it has most likely crashed" in str(error)
        assert "--wait-for-lease" in str(error)
    else:
        assert f"it renewed the lease {silent_s} s ago, so it is running" in str(error)


def test_a_lease_item_of_an_older_run_without_times_says_only_when_it_lapses():
    error = held_error(
        "orders", {"owner": "run-1", "epoch": 4, "expires_at_ms": NOW + 30_000, "alive_at_ms": None}, NOW
    )
    assert str(error).startswith("connector 'orders' is leased by run run-1 until ") and ", in 30 s; " in str(error)
    assert not error.renewals_stopped
