"""The fault matrix's figures as a Markdown table: one row per scenario (faults injected by kind, runs, exit
codes, records, duplicates, missing, leftover multipart uploads, seconds).

`make test-faults` prints it at the end (tests/faults/conftest.py); with FAULT_FIGURES=<file> the rows are also
written as JSON lines, which `python -m devtools.faults.report <file>` prints again (for docs/faults.md)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

COLUMNS = (
    ("scenario", "scenario"),
    ("faults", "faults injected"),
    ("runs", "runs"),
    ("exit_codes", "exit codes"),
    ("records", "records"),
    ("duplicates", "duplicates"),
    ("missing", "missing"),
    ("leftover_uploads", "leftover uploads"),
    ("seconds", "seconds"),
)


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if any(" " in str(v) for v in value) else " ".join(map(str, value))
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def totals(rows: list[dict]) -> dict:
    """One row adding up the others: faults by kind, runs, exit codes by code, records, duplicates, missing,
    scenarios with leftover uploads, seconds."""
    faults: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    for row in rows:
        faults.update(row.get("faults") or {})
        codes.update(str(code).split(" ", 1)[0] for code in row.get("exit_codes") or [])
    number = lambda name: sum(r[name] for r in rows if isinstance(r.get(name), int))  # noqa: E731
    left = [r["leftover_uploads"] for r in rows if r.get("leftover_uploads") not in (None, 0)]
    return {
        "scenario": f"**total: {len(rows)} scenarios**",
        "faults": dict(faults),
        "runs": number("runs"),
        "exit_codes": [f"{code}: {n}" for code, n in sorted(codes.items())],
        "records": number("records"),
        "duplicates": number("duplicates"),
        "missing": number("missing"),
        "leftover_uploads": f"{len(left)} scenarios (see notes)" if left else 0,
        "seconds": round(sum(r.get("seconds") or 0 for r in rows), 1),
    }


def format_table(rows: list[dict]) -> str:
    """The rows, then their totals when there are several."""
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows + ([totals(rows)] if len(rows) > 1 else []):
        lines.append("| " + " | ".join(_cell(row.get(name)) for name, _ in COLUMNS) + " |")
    return "\n".join(lines)


def write_rows(rows: list[dict], path: str) -> None:
    with Path(path).open("a") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m devtools.faults.report FIGURES.jsonl", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in Path(argv[0]).read_text().splitlines() if line.strip()]
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
