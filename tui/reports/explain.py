"""`tracetui explain`: what the patterns in a trace mean."""

from __future__ import annotations

from ..model.analyses.results import Results
from ..names import shorten
from ..tables.explain import fields, note
from .formats import grid, terminal_width, to_json, wrap_prose

EXAMPLE_WIDTH = 70  # an example event's name, cut at a word with …


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
        rows = [[f.title, str(f.count) if f.events else "-", note(f)] for f in findings]
        return grid("md", ["Pattern", "Events", "What it means"], rows, [])
    out = []
    width = terminal_width()
    for f in findings:
        name = a.trace.name_of(f.events[0]) if f.events else ""
        example = f" e.g. {name if width == 0 else shorten(name, EXAMPLE_WIDTH)}" if f.events else ""  # 0: whole
        count = f"{f.count:,} event{'s' if f.count != 1 else ''}"
        out.append(f"* {f.title} ({count}{example})\n  {note(f)}" if f.events else f"* {f.title}\n  {note(f)}")
    return "\n".join(wrap_prose(out, width))
