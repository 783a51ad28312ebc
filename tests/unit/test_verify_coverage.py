"""The coverage check of `sink-engine verify` (sink_engine/target/s3_objects/verify/coverage.py): gaps, overlaps,
dead letters and
skipped offsets, over names, counts and, when stored, last offsets."""

from __future__ import annotations

import pytest

from sink_engine.target.s3_objects.verify.coverage import COUNTS_ONLY, PROVEN, Commit, Entry, Letter, check


def files(*spans: tuple[int, int]) -> list[Entry]:
    """Objects of one file stream: (start, count)."""
    return [Entry(f"t+0+{start:010d}.json", start, count) for start, count in spans]


def problems(coverage) -> list[tuple[str, int, int]]:
    return [(f.kind, f.first, f.last) for f in coverage.findings]


def test_contiguous_files_up_to_the_commit_are_proven():
    # given three files of 10 and a commit at 30 that started at 0
    coverage = check(files((0, 10), (10, 10), (20, 10)), [], Commit(30, 0, 0, 0), contiguous=True)
    # then nothing is missing, by proof
    assert (coverage.proof, problems(coverage), coverage.records) == (PROVEN, [], 30)


@pytest.mark.parametrize(
    "stored, commit, expected",
    [
        # a deleted middle object: its offsets, exactly, since nothing was skipped
        (files((0, 10), (20, 10)), Commit(30, 0, 0, 0), [("gap", 10, 19)]),
        # a deleted first object: the commit knows where the partition began
        (files((10, 10), (20, 10)), Commit(30, 0, 0, 0), [("gap", 0, 9)]),
        # a deleted last object: the commit says how far files went
        (files((0, 10), (10, 10)), Commit(30, 0, 0, 0), [("gap", 20, 29)]),
        # the first object copied under start 5: it runs into the copy, which runs into the next
        (files((0, 10), (5, 10), (10, 10), (20, 10)), Commit(30, 0, 0, 0), [("overlap", 5, 9), ("overlap", 10, 14)]),
        # one object copied under the start of another (another folder): two objects start at one offset, and hold
        # its offsets twice
        (
            files((0, 10), (10, 10), (20, 10)) + [Entry("t/x/t+0+0000000010.json", 10, 10)],
            Commit(30, 0, 0, 0),
            [("overlap", 10, 10), ("overlap", 10, 19)],
        ),
    ],
)
def test_contiguous_files_name_the_offsets_of_a_gap_or_overlap(stored, commit, expected):
    assert problems(check(stored, [], commit, contiguous=True)) == expected


def test_skipped_offsets_counted_by_the_commits_fill_the_spans():
    # given files whose spans hold 3 offsets more than their records (ignored tombstones, transforms' drops)
    stored = files((0, 9), (10, 8))
    # when the commits counted 3 skipped offsets, all is accounted; when they counted 1, 2 are missing somewhere
    assert problems(check(stored, [], Commit(20, 0, 0, 3), contiguous=True)) == []
    found = check(stored, [], Commit(20, 0, 0, 1), contiguous=True).findings
    # then both spans are named, as verify cannot tell which skips are legitimate
    assert [(f.kind, f.first, f.last) for f in found] == [("gap", 0, 9), ("gap", 10, 19)]
    assert "in all 3 offsets lack one, the commits skipped 1: 2 missing" in found[0].message


def test_dead_letters_fill_the_offsets_between_files():
    # given a dead letter at 4 and 15 between the records of two files, both committed
    letters = [Letter("dlq/t+0+0000000004.json", 4), Letter("dlq/t+0+0000000004.json", 15)]
    coverage = check(files((0, 9), (10, 9)), letters, Commit(20, 0, 2, 0), contiguous=True)
    assert (coverage.letters, problems(coverage)) == (2, [])


def test_a_removed_dead_letter_is_a_gap_in_its_span():
    # given the dead letter at 15 removed, while the commit counted two
    coverage = check(files((0, 9), (10, 9)), [Letter("k", 4)], Commit(20, 0, 2, 0), contiguous=True)
    # then the missing dead letter is reported, and the span that lacks one offset is named
    assert problems(coverage) == [("gap", 0, 19), ("gap", 10, 19)]
    assert "1 of the 2 committed dead letters are missing" in coverage.findings[0].message
    assert "1 of the offsets 10..19" in coverage.findings[1].message


def test_a_dead_letter_at_an_objects_first_record_or_twice_is_an_overlap():
    letters = [Letter("a", 10), Letter("b", 12), Letter("c", 12)]
    assert problems(check(files((0, 10), (10, 7)), letters, Commit(20, 0, 3, 0), contiguous=True)) == [
        ("overlap", 10, 10),
        ("overlap", 12, 12),
    ]


def test_dead_letters_in_a_topic_are_counted_not_placed():
    # given a dead-letter topic (letters None): its committed count stands for offsets without an object
    assert problems(check(files((0, 9), (10, 10)), None, Commit(20, 0, 1, 0), contiguous=True)) == []
    assert problems(check(files((0, 8), (10, 10)), None, Commit(20, 0, 1, 0), contiguous=True)) == [("gap", 0, 9)]


def test_objects_past_the_commit_are_listed_not_checked():
    coverage = check(files((0, 10), (10, 10)), [Letter("d", 25)], Commit(10, 0, 0, 0), contiguous=True)
    assert (problems(coverage), coverage.uncommitted) == ([], ["d", "t+0+0000000010.json"])


def test_without_a_first_offset_the_check_starts_at_the_lowest_stored_or_kafkas_earliest():
    stored = files((100, 10), (110, 10))
    assert problems(check(stored, [], Commit(120, None, 0, 0), contiguous=True)) == []
    assert problems(check(stored, [], Commit(120, None, 0, 0), contiguous=True, low=90)) == [("gap", 90, 99)]


def interleaved(*spans: tuple[int, int, int | None]) -> list[Entry]:
    """Objects of a field or time partitioner: (start, count, last offset or None)."""
    return [
        Entry(f"t/f={i}/t+0+{start:010d}.json", start, count, start if last is not None else None, last)
        for i, (start, count, last) in enumerate(spans)
    ]


def test_interleaved_files_with_last_offsets_are_proven_per_generation():
    # given two files open together over 0..9 (6 + 4 records), then one over 10..19
    stored = interleaved((0, 6, 9), (1, 4, 8), (10, 10, 19))
    coverage = check(stored, [], Commit(20, 0, 0, 0), contiguous=False)
    assert (coverage.proof, problems(coverage)) == (PROVEN, [])
    # when the second generation is deleted, its offsets are named
    assert problems(check(stored[:2], [], Commit(20, 0, 0, 0), contiguous=False)) == [("gap", 10, 19)]


def test_interleaved_files_without_last_offsets_are_checked_by_counts_only():
    stored = interleaved((0, 6, None), (1, 4, None), (10, 10, None))
    coverage = check(stored, [], Commit(20, 0, 0, 0), contiguous=False)
    assert (coverage.proof, problems(coverage)) == (COUNTS_ONLY, [])
    assert problems(check(stored[1:], [], Commit(20, 0, 0, 0), contiguous=False)) == [("gap", 0, 19)]
    assert problems(check(stored + [Entry("copy", 3, 6)], [], Commit(20, 0, 0, 0), contiguous=False)) == [
        ("overlap", 0, 19)
    ]


def test_metadata_that_disagrees_with_the_name_is_a_mismatch():
    # given an object copied under start 5 with its tags (startOffset 0) kept
    stored = [
        Entry("t+0+0000000000.json", 0, 5, 0, 4),
        Entry("t+0+0000000005.json", 5, 5, 0, 4),
        Entry("t+0+0000000010.json", 10, 10, 10, 19),
    ]
    assert ("mismatch", 5, 5) in problems(check(stored, [], Commit(20, 0, 0, 0), contiguous=False))
