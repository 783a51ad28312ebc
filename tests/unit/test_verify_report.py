"""`sink-engine verify`'s report: the objects past a partition's commit summarized in one line, all with -v."""

from __future__ import annotations

import io

import pytest

from sink_engine.model import TopicPartition
from sink_engine.target.s3_objects.verify.audit import Audit
from sink_engine.target.s3_objects.verify.coverage import Coverage


def _report(uncommitted: list[str], verbose: bool) -> str:
    from sink_engine.target.s3_objects.verify.report import print_report

    coverage = Coverage(0, 500, "proven", 5, 500, 0, 0, uncommitted=uncommitted)
    out = io.StringIO()
    assert print_report(Audit({TopicPartition("orders", 0): coverage}, 3, 5 + len(uncommitted)), out, verbose) == 0
    return out.getvalue()


KEYS = [f"topics/orders/partition=0/orders+0+{start:010d}.json" for start in range(900, 500, -100)]


@pytest.mark.parametrize("verbose", [False, True])
def test_objects_past_the_commit_are_one_line_with_a_few_examples_or_all_with_v(verbose):
    # given four objects of a partition at or past its committed offset 500 (listed in any order)
    # when the report is printed
    notes = [line for line in _report(KEYS, verbose).splitlines() if line.startswith("note")]
    # then one line counts them and names the first three by offset, or all four with -v
    assert len(notes) == 1
    assert notes[0].startswith("note orders-0: 4 objects at or past the committed offset 500 (not committed yet): ")
    named = [key for key in KEYS if key in notes[0]]
    assert named == (KEYS if verbose else KEYS[1:])  # by offset: 600, 700, 800 (and 900)
    assert ("and 1 more (-v lists them all)" in notes[0]) != verbose


def test_no_note_without_objects_past_the_commit():
    assert "note" not in _report([], False)
