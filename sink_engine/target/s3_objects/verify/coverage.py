"""The coverage check of one topic-partition: a pure function over its objects, dead letters and commit (the
reasoning is in `sink_engine.target.s3_objects.verify`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

PROVEN, COUNTS_ONLY = "proven", "counts only"


@dataclass(frozen=True)
class Entry:
    """A data object: its key, the start offset its name gives, its record count, and when known the offsets of
    its first and last records from its metadata (tags, Block-GZIP index)."""

    key: str
    start: int
    count: int
    first: int | None = None
    last: int | None = None


@dataclass(frozen=True)
class Letter:
    """A dead letter found in the bucket: the object holding it and its source offset."""

    key: str
    offset: int


@dataclass(frozen=True)
class Commit:
    """The committed range [first_offset, next_offset) of the partition and its counters (all runs)."""

    next_offset: int
    first_offset: int | None
    dead_letters: int
    skipped: int


@dataclass(frozen=True)
class Finding:
    kind: str  # "gap", "overlap" or "mismatch"
    first: int
    last: int
    message: str


@dataclass(frozen=True)
class Coverage:
    low: int
    high: int  # the committed next offset: offsets [low, high) are checked
    proof: str  # PROVEN or COUNTS_ONLY
    objects: int
    records: int
    letters: int  # dead letters accounted (found, or counted when not readable)
    skipped: int
    findings: list[Finding] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)  # keys of objects and dead letters at or past `high`


@dataclass(frozen=True)
class _Span:
    start: int
    stop: int  # exclusive
    count: int
    keys: tuple[str, ...]
    last: int | None


def check(
    entries: list[Entry], letters: list[Letter] | None, commit: Commit, contiguous: bool, low: int | None = None
) -> Coverage:
    """Check [low, commit.next_offset): `low` is the first offset to check when the commit does not know it
    (`first_offset`), else the lowest offset stored. `letters` None: the dead letters cannot be read (a
    dead-letter topic), so the committed count is taken as skipped offsets. `contiguous`: one file stream per
    partition (files follow each other)."""
    high = commit.next_offset
    if commit.first_offset is not None:
        low = commit.first_offset
    else:
        stored = [e.start for e in entries] + [x.offset for x in letters or []] + [high]
        low = min(stored + ([low] if low is not None else []))
    objects = sorted((e for e in entries if low <= e.start < high), key=lambda e: e.start)
    placed = sorted((x for x in letters or [] if low <= x.offset < high), key=lambda x: x.offset)
    findings = _outside(entries, letters or [], low) + _duplicates(objects, placed) + _metadata(objects)
    unplaced = commit.skipped + (commit.dead_letters if letters is None else 0)
    if letters is not None and len(placed) != commit.dead_letters:
        findings.append(_letter_count(len(placed), commit, low, high))
    spans, proof = _spans(objects, contiguous)
    if spans is None:
        findings += _totals(objects, placed, unplaced, low, high)
    else:
        missing = commit.dead_letters - len(placed) if letters is not None else 0
        findings += _span_findings(spans, placed, unplaced, low, high, exact=unplaced == 0 and missing <= 0)
    return Coverage(
        low,
        high,
        proof,
        len(objects),
        sum(e.count for e in objects),
        len(placed) if letters is not None else commit.dead_letters,
        commit.skipped,
        sorted(findings, key=lambda f: (f.first, f.kind)),
        sorted(
            [e.key for e in entries if e.start >= high] + sorted({x.key for x in letters or [] if x.offset >= high})
        ),
    )


def _outside(entries: list[Entry], letters: list[Letter], low: int) -> list[Finding]:
    return [
        Finding(
            "overlap",
            e.start,
            e.start,
            f"{e.key} starts at {e.start}, before the partition's first committed offset {low}",
        )
        for e in entries
        if e.start < low
    ] + [
        Finding(
            "overlap",
            x.offset,
            x.offset,
            f"dead letter at offset {x.offset} in {x.key} is before the partition's first committed offset {low}",
        )
        for x in letters
        if x.offset < low
    ]


def _duplicates(objects: list[Entry], letters: list[Letter]) -> list[Finding]:
    """A start offset is the first record of one object; an offset has at most one dead letter, which is in
    no object that starts there."""
    found = []
    starts: dict[int, list[str]] = {}
    for e in objects:
        starts.setdefault(e.start, []).append(e.key)
    for start, keys in starts.items():
        if len(keys) > 1:
            found.append(
                Finding(
                    "overlap",
                    start,
                    start,
                    f"offset {start} is the first record of {len(keys)} objects: {', '.join(keys)}",
                )
            )
    for offset, n in Counter(x.offset for x in letters).items():
        if n > 1:
            found.append(Finding("overlap", offset, offset, f"offset {offset} has {n} dead letters"))
    for x in letters:
        if x.offset in starts:
            found.append(
                Finding(
                    "overlap",
                    x.offset,
                    x.offset,
                    f"offset {x.offset} is both a dead letter in {x.key} and the first record of {starts[x.offset][0]}",
                )
            )
    return found


def _metadata(objects: list[Entry]) -> list[Finding]:
    """An object's metadata must agree with its name and count."""
    found = []
    for e in objects:
        if e.first is not None and e.first != e.start:
            found.append(
                Finding(
                    "mismatch",
                    e.start,
                    e.start,
                    f"{e.key}: its name says it starts at {e.start}, its metadata at {e.first}",
                )
            )
        if e.last is not None and e.last - e.start + 1 < e.count:
            found.append(
                Finding(
                    "mismatch",
                    e.start,
                    e.last,
                    f"{e.key} holds {e.count} records, more than the offsets {e.start}..{e.last}",
                )
            )
    return found


def _letter_count(found: int, commit: Commit, low: int, high: int) -> Finding:
    if found < commit.dead_letters:
        return Finding(
            "gap",
            low,
            high - 1,
            f"{commit.dead_letters - found} of the {commit.dead_letters} committed "
            "dead letters are missing from the dead-letter prefix",
        )
    return Finding(
        "overlap",
        low,
        high - 1,
        f"{found} dead letters found below the committed offset, {commit.dead_letters} committed",
    )


def _spans(objects: list[Entry], contiguous: bool) -> tuple[list[_Span] | None, str]:
    """The spans of files that follow each other: each object, or with interleaved files each generation of
    objects that overlap in offsets (needs every object's last offset). None when only totals can be checked."""
    if contiguous:
        return [_Span(e.start, e.start, e.count, (e.key,), e.last) for e in objects], PROVEN
    if any(e.last is None for e in objects):
        return None, COUNTS_ONLY
    spans: list[_Span] = []
    reach = 0  # the last offset of spans[-1]
    for e in objects:
        last = e.last
        assert last is not None  # every one is known (above)
        if spans and e.start <= reach:
            s, reach = spans[-1], max(reach, last)
            spans[-1] = _Span(s.start, s.stop, s.count + e.count, s.keys + (e.key,), reach)
        else:
            reach = last
            spans.append(_Span(e.start, e.start, e.count, (e.key,), last))
    return spans, PROVEN


def _span_findings(
    spans: list[_Span], letters: list[Letter], unplaced: int, low: int, high: int, exact: bool
) -> list[Finding]:
    """Each span owns the offsets up to the next one's start (the last: up to `high`); what its objects and the
    dead letters in it do not fill must add up to `unplaced`. `exact`: nothing is skipped anywhere, so each
    object's records are consecutive from its start and a gap's offsets are known."""
    bounds = [s.start for s in spans] + [high]
    owners = [_Span(low, bounds[0], 0, (), None)] + [
        _Span(s.start, stop, s.count, s.keys, s.last) for s, stop in zip(spans, bounds[1:])
    ]
    found, open_spans, total = [], [], 0
    for span in owners:
        if span.stop <= span.start and not span.keys:
            continue
        inside = sum(1 for x in letters if span.start <= x.offset < span.stop)
        what = ", ".join(span.keys)
        found += _overfull(span, inside, what)
        unexplained = span.stop - span.start - span.count - inside
        if unexplained > 0:
            open_spans.append((span, unexplained, inside, what))
            total += unexplained
    if total > unplaced:
        for span, unexplained, inside, what in open_spans:
            located = exact and not inside
            after = f"after {what}" if span.keys else "before the first object"
            first = span.start + span.count if located else span.start
            where = (
                f"offsets {first}..{span.stop - 1}"
                if located
                else f"{unexplained} of the offsets {span.start}..{span.stop - 1}"
            )
            found.append(
                Finding(
                    "gap",
                    first,
                    span.stop - 1,
                    f"{where} in no object or dead letter ({after}); in all {total} offsets "
                    f"lack one, the commits skipped {unplaced}: {total - unplaced} missing",
                )
            )
    elif total < unplaced:
        found.append(
            Finding(
                "overlap",
                low,
                high - 1,
                f"the commits skipped {unplaced} offsets without an object or "
                f"dead letter, but only {total} offsets lack one: objects "
                f"hold {unplaced - total} records more than committed",
            )
        )
    return found


def _overfull(span: _Span, inside: int, what: str) -> list[Finding]:
    """A span whose objects (with `inside` dead letters among its offsets) hold more than its offsets."""
    found, length = [], span.stop - span.start
    if span.last is not None and span.last >= span.stop:
        found.append(
            Finding(
                "overlap",
                span.stop,
                span.last,
                f"{what} ends at {span.last}, past the start of the next object at {span.stop}",
            )
        )
    if span.count > length:
        found.append(
            Finding(
                "overlap",
                span.stop,
                span.start + span.count - 1,
                f"{what} holds {span.count} records from offset {span.start}, but the next object "
                f"starts at {span.stop}",
            )
        )
    elif span.count + inside > length:
        found.append(
            Finding(
                "overlap",
                span.start,
                span.stop - 1,
                f"{what or 'no object'} and the {inside} dead letters among offsets "
                f"{span.start}..{span.stop - 1} hold {span.count + inside - length} records more than "
                "those offsets",
            )
        )
    return found


def _totals(objects: list[Entry], letters: list[Letter], unplaced: int, low: int, high: int) -> list[Finding]:
    held = sum(e.count for e in objects) + len(letters) + unplaced
    if held == high - low:
        return []
    kind, n, what = (
        ("gap", high - low - held, "in no object or dead letter")
        if held < high - low
        else ("overlap", held - (high - low), "more in objects and dead letters than")
    )
    return [
        Finding(
            kind,
            low,
            high - 1,
            f"{n} offsets {what} the committed offsets {low}..{high - 1} "
            "(counts only: the objects' last offsets are not known)",
        )
    ]
