"""Pending-record bookkeeping, pure: what a batch adds and what a commit removes."""
from lambdas.trigger.pending import Pending, Seen, Thresholds, backlog, merge, should_start, summarize


def test_summarize_keeps_newest_offset_and_oldest_record():
    seen = summarize([("t", 0, 5, 50), ("t", 0, 3, 30), ("t", 1, 9, 90)])
    assert seen == {("t", 0): Seen(6, 3, 30), ("t", 1): Seen(10, 9, 90)}


def test_merge_drops_what_was_committed():
    assert merge(Seen(10, 0, 100), Seen(20, 10, 200), committed=10) == Seen(20, 10, 200)
    assert merge(Seen(10, 0, 100), None, committed=10) == Seen(10)
    assert merge(None, None, committed=0) is None


def test_merge_keeps_the_older_stored_record():
    assert merge(Seen(10, 4, 40), Seen(20, 10, 200), committed=2) == Seen(20, 4, 40)


def test_backlog_and_decision():
    seen = {("t", 0): Seen(20, 10, 1_000), ("t", 1): Seen(5, 0, 2_000)}
    pending = backlog(seen, {("t", 0): 10, ("t", 1): 5})
    assert pending == Pending(10, 1_000)
    thresholds = Thresholds(min_pending_records=100, max_pending_age_ms=5_000)
    assert should_start(pending, 3_000, thresholds) is None
    assert should_start(pending, 6_000, thresholds) == "age"
    assert should_start(Pending(100, 5_999), 6_000, thresholds) == "records"
    assert should_start(Pending(0, None), 10**9, thresholds) is None
