"""The what-if grammar is one table (critical/whatif.py's GRAMMAR): it parses the specs, and the README's table,
the CLI's help and MCP's description say what it says."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from conftest import ROOT, SAMPLES

import tracetui
from tui.cli import main
from tui.cli.mcp.tools import tools
from tui.model.analyses.critical.whatif import FORMS, GRAMMAR, WhatIfError, grammar_table, parse_spec

README = (ROOT / "README.md").read_text()


def readme_rows() -> list[str]:
    """The rows of the README's what-if table (after its `| spec | changes |` header)."""
    block = README.split("| spec | changes |\n|---|---|\n", 1)[1]
    rows = re.match(r"((?:\|.*\|\n)+)", block)
    assert rows is not None, "the README's what-if table is gone"
    return rows.group(1).splitlines()


def test_the_readme_table_is_the_grammar_row_for_row():
    assert sorted(readme_rows()) == sorted(grammar_table())


def test_the_forms_of_one_what_follow_the_same_rules():
    """parse_spec reads a what's rules from its first form: the others must agree."""
    for f in GRAMMAR:
        first = FORMS[f.what]
        assert (f.pattern, f.factor, f.only) == (first.pattern, first.factor, first.only), f.written


@pytest.mark.parametrize("form", GRAMMAR, ids=lambda f: f.example)
def test_each_forms_example_parses_to_its_what_and_saves_time_on_a_real_trace(form):
    spec = parse_spec(form.example)
    assert spec.what == form.what
    doc = tracetui.load(SAMPLES / "a100-train-control.json.gz").critical(what_if=[form.example])
    assert doc["what_if"]["saving_us"] > 0  # each form matched something on the typical step's path


@pytest.mark.parametrize(
    ("text", "rule"),
    [(f"{f.what}:x=2", "takes no pattern") for f in GRAMMAR if f.pattern == "none"]
    + [(f"{f.what}=2", "give a pattern") for f in GRAMMAR if f.pattern == "needed"]
    + [(f"{f.what}:x=2", f.only) for f in GRAMMAR if f.factor == "zero"],
)
def test_the_grammars_rules_are_what_parsing_holds_a_spec_to(text, rule):
    with pytest.raises(WhatIfError, match=re.escape(rule)):
        parse_spec(text)


def test_the_cli_help_and_mcps_description_name_every_form():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["critical", "--help"])
    help_text = " ".join(out.getvalue().split())
    critical = next(t for t in tools(None) if t.__name__ == "critical")  # type: ignore[arg-type]
    for form in GRAMMAR:
        assert all(w in help_text for w in form.written), form.written
        assert f"{form.example!r} ({form.brief})" in " ".join((critical.__doc__ or "").split())
