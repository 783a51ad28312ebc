"""The fault matrix's figures as a Markdown table: one row per scenario (faults injected by kind, runs, exit
codes, records, duplicates, missing, leftover multipart uploads, seconds).

`make test-faults` prints it at the end (tests/faults/conftest.py); with FAULT_FIGURES=<file> the rows are also
written as JSON lines, which `python -m devtools.faults.report <file>` prints again (for docs/faults.md)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = (("scenario", "scenario"), ("faults", "faults injected"), ("runs", "runs"), ("exit_codes", "exit codes"),
           ("records", "records"), ("duplicates", "duplicates"), ("missing", "missing"),
           ("leftover_uploads", "leftover uploads"), ("seconds", "seconds"))


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
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
