"""`tracetui explain`: what the patterns in a trace mean."""

from __future__ import annotations

from ..model.analyses.explain.findings import Finding
from ..model.analyses.results import Results
from ..tables.explain import fields, note
from ..tables.explain_savings import headline, what_if_line
from ..text.names import shorten
from .formats import grid, terminal_width, to_json, wrap_prose, written_doc

EXAMPLE_WIDTH = 70  # an example event's name, cut at a word with …


@written_doc
def explain_document(a: Results) -> dict:
    """What `tracetui explain --format json` prints, as data."""
    return {"findings": [fields(f, [a.trace.name_of(e) for e in f.events[:3]]) for f in a.findings]}


def render_explain(a: Results, fmt: str) -> str:
    findings = a.findings
    if fmt == "json":
        return to_json(explain_document(a))
    if not findings:
        return "No explain rule fired on this trace."
    if fmt == "md":
        rows = [[f.title, str(f.count) if f.events else "-", headline(f) or "-", _text(f)] for f in findings]
        return grid("md", ["Pattern", "Events", "Fixing it", "What it means"], rows, [], left=[True, False, True, True])
    out = []
    width = terminal_width()
    for f in findings:
        name = a.trace.name_of(f.events[0]) if f.events else ""
        example = f" e.g. {name if width == 0 else shorten(name, EXAMPLE_WIDTH)}" if f.events else ""  # 0: whole
        count = f" ({f.count:,} event{'s' if f.count != 1 else ''}{example})" if f.events else ""
        saves = f" — {headline(f)}" if f.saving is not None else ""
        out.append(f"* {f.title}{count}{saves}\n  " + "\n  ".join(p for p in (note(f), what_if_line(f)) if p))
    return "\n".join(wrap_prose(out, width))


def _text(f: Finding) -> str:
    return " ".join(p for p in (note(f), what_if_line(f)) if p)
