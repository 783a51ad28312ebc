"""The configuration reference page (docs/reference/configuration.md) is what the key tables render
(devtools/config_reference.py): a key added, removed or re-documented in sink_engine/config without `make docs`
fails here, so the page and the tables cannot drift."""

from __future__ import annotations

from devtools import config_reference
from sink_engine.config import key_policy
from sink_engine.config.confluent_keys import LOOK_ALIKES
from sink_engine.config.keys import KEYS, NOT_BUILT_YET, PASSTHROUGH_DOCS, PASSTHROUGH_PREFIXES


def test_the_committed_page_is_what_the_tables_render():
    committed = config_reference.PAGE.read_text()
    assert committed == config_reference.render(), (
        "docs/reference/configuration.md differs from the key tables: run `make docs` (or "
        "`python -m devtools.config_reference`) and commit the page"
    )


def test_check_mode_fails_on_a_stale_page(tmp_path, capsys):
    page = tmp_path / "configuration.md"
    page.write_text(config_reference.render().replace("`flush.size`", "`flush.count`", 1))
    assert config_reference.main(["--check", "--page", str(page)]) == 1
    assert "make docs" in capsys.readouterr().err
    assert config_reference.main(["--page", str(page)]) == 0
    assert config_reference.main(["--check", "--page", str(page)]) == 0


def test_every_key_of_every_table_is_on_the_page():
    page = config_reference.render()
    names = [k.name for k in KEYS] + [prefix + "*" for prefix in PASSTHROUGH_DOCS]
    names += [*key_policy.ACCEPTED_UNUSED, *key_policy.ACCEPTED_VALUES, *NOT_BUILT_YET, *LOOK_ALIKES]
    missing = [name for name in names if f"`{name}`" not in page]
    assert not missing, missing


def test_every_key_has_a_doc_and_a_section():
    assert all(k.doc.strip() for k in KEYS)
    assert tuple(PASSTHROUGH_DOCS) == PASSTHROUGH_PREFIXES
    unsectioned = [k.name for k in KEYS if not any(s.matches(k.name) for s in config_reference.SECTIONS)]
    assert not unsectioned, f"keys that fall under 'Other keys': add them to a section: {unsectioned}"


def test_doc_markdown_keeps_code_and_links_and_escapes_the_rest():
    cell = config_reference.markdown("a|b <x> *y* `c|d` [Schemas](schemas/index.md)")
    assert cell == "a\\|b &lt;x&gt; \\*y\\* `c|d` [Schemas](../schemas/index.md)"
