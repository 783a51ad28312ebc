"""Pending-record bookkeeping, pure: what a batch adds and what a commit removes."""

from lambdas.trigger.pending import Committed, Pending, Seen, backlog, merge, summarize


def _records(*rows):
    return [{"topic": t, "partition": p, "offset": o, "timestamp": ts} for t, p, o, ts in rows]


def test_summarize_keeps_newest_offset_lowest_offset_record_and_newest_time_per_partition():
    records = _records(("t", 0, 5, 50), ("t", 0, 3, 70), ("t", 0, 4, 30), ("t", 1, 9, 90), ("u", 0, 1, 1))
    assert summarize(records, {}, {"t"}) == {("t", 0): Seen(6, 3, 70, 70), ("t", 1): Seen(10, 9, 90, 90)}


def test_summarize_ignores_records_the_commit_covers():
    records = _records(("t", 0, 5, 50), ("t", 0, 6, 60), ("t", 1, 2, 20))
    assert summarize(records, {("t", 0): 6, ("t", 1): 3}, {"t"}) == {("t", 0): Seen(7, 6, 60, 60)}


def test_merge_drops_what_was_committed():
    assert merge(Seen(10, 0, 100, 190), Seen(20, 10, 200, 290), committed=10) == Seen(20, 10, 200, 290)
    assert merge(Seen(10, 0, 100, 190), None, committed=10) == Seen(10)
    assert merge(None, None, committed=0) is None


def test_merge_keeps_the_lower_live_record_and_the_newest_time():
    assert merge(Seen(10, 4, 40, 95), Seen(20, 10, 200, 210), committed=2) == Seen(20, 4, 40, 210)


def test_a_commit_inside_what_was_seen_keeps_the_old_first_record_for_the_age_only():
    kept = merge(Seen(30, 0, 100, 300), None, committed=20)
    assert kept == Seen(30, 0, 100, 300) and kept.first_offset < 20  # below the commit: not a base for spans
    assert merge(kept, Seen(31, 30, 310, 310), committed=20) == Seen(31, 30, 310, 310)


def test_backlog_totals_offsets_past_the_commits_and_the_oldest_time():
    seen = {("t", 0): Seen(20, 10, 1_000, 1_500), ("t", 1): Seen(5, 0, 2_000, 2_000), ("t", 2): Seen(7, 0, 500, 600)}
    pending = backlog(seen, {("t", 0): Committed(10, 0), ("t", 1): Committed(5, 0)})
    assert pending == Pending(10 + 7, 500, behind=(10, 7))  # per partition with some pending, in order
    assert pending.age_ms(1_500) == 1_000 and Pending(0, None).age_ms(10**9) == 0
