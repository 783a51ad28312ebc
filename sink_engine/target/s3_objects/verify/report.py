"""The table `sink-engine verify` prints, and its findings: one line per gap, overlap or mismatch."""

from __future__ import annotations

from typing import TextIO

from sink_engine.target.s3_objects.verify.audit import Audit

EXAMPLES = 3  # objects past the commit named per partition, without -v


def print_report(result: Audit, out: TextIO, verbose: bool = False) -> int:
    """Print the table and the findings, and per partition the objects past its commit: how many and a few of them
    (`verbose`: all); the exit code: 0 when no partition has a finding, else 1."""
    print(
        f"{'topic-partition':<28} {'offsets':>23} {'objects':>8} {'records':>10} {'dead letters':>12} "
        f"{'skipped':>8}  {'proof':<12} result",
        file=out,
    )
    findings = 0
    for tp, c in result.partitions.items():
        span = f"{c.low}..{c.high - 1}" if c.high > c.low else "-"
        status = "ok" if not c.findings else f"{len(c.findings)} problem{'s' if len(c.findings) > 1 else ''}"
        print(
            f"{str(tp):<28} {span:>23} {c.objects:>8} {c.records:>10} {c.letters:>12} {c.skipped:>8}  "
            f"{c.proof:<12} {status}",
            file=out,
        )
        findings += len(c.findings)
    for tp, c in result.partitions.items():
        for f in c.findings:
            print(f"{f.kind.upper()} {tp} offsets {f.first}..{f.last}: {f.message}", file=out)
        if c.uncommitted:
            print(_uncommitted_note(str(tp), c.high, c.uncommitted, verbose), file=out)
    print(f"{result.objects} data objects, {result.requests} S3 requests", file=out)
    return 1 if findings else 0


def _uncommitted_note(tp: str, committed: int, keys: list[str], verbose: bool) -> str:
    """One line for a partition's objects and dead letters at or past its commit (a run's files not committed yet, or
    the files of a run that crashed before its commit, which the next run writes again under the same keys)."""
    keys = sorted(keys)
    shown = keys if verbose else keys[:EXAMPLES]
    more = "" if len(shown) == len(keys) else f" and {len(keys) - len(shown)} more (-v lists them all)"
    return (
        f"note {tp}: {len(keys)} object{'s' if len(keys) > 1 else ''} at or past the committed offset {committed} "
        f"(not committed yet): {', '.join(shown)}{more}"
    )
