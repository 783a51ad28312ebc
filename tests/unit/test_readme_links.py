"""README.md is a short page of links into docs/ (the site's pages, which `make docs` checks under strict link
validation); its own relative links are checked here, since the site does not build it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_relative_link_of_the_readme_names_a_file_that_exists():
    targets = re.findall(r"\]\(([^)\s]+)\)", (ROOT / "README.md").read_text())
    relative = [t.split("#")[0] for t in targets if "://" not in t and not t.startswith("#")]
    assert relative, "the README links into docs/"
    assert [t for t in relative if not (ROOT / t).is_file()] == []


def test_the_quick_start_keeps_its_two_commands_first():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[1] for line in block[:2]] == ["demo", "test"]
