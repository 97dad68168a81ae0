"""`tracetui explain`: what the patterns in a trace mean."""

from __future__ import annotations

import numpy as np

from ..model.analyses.explain.findings import Finding
from ..model.analyses.results import Results
from ..tables.explain import counted, fields, note
from ..tables.explain_savings import headline, what_if_line
from ..text.names import shorten
from .formats import grid, terminal_width, to_json, wrap_prose, written_doc

EXAMPLE_WIDTH = 70  # the names of a finding's events in its heading, together (the first cut at a word with …)
NAMED = 3  # of them at most


@written_doc
def explain_document(a: Results) -> dict:
    """What `tracetui explain --format json` prints, as data."""
    return {"findings": [fields(f, [a.trace.name_of(e) for e in f.events[:3]]) for f in a.findings]}


def render_explain(a: Results, fmt: str) -> str:
    findings = a.findings
    if fmt == "json":
        return to_json(explain_document(a))
    if not findings:
        return "\n".join(wrap_prose([_none_fired(a)], terminal_width()))
    if fmt == "md":
        rows = [[f.title, counted(f, []) if f.events else "-", headline(f) or "-", _text(f)] for f in findings]
        return grid("md", ["Pattern", "Count", "Fixing it", "What it means"], rows, [], left=[True, False, True, True])
    out = []
    width = terminal_width()
    for f in findings:
        count = f" ({counted(f, _names(a, f, width))})" if f.events else ""
        saves = f" — {headline(f)}" if f.saving is not None else ""
        out.append(f"* {f.title}{count}{saves}\n  " + "\n  ".join(p for p in (note(f), what_if_line(f)) if p))
    return "\n".join(wrap_prose(out, width))


def _none_fired(a: Results) -> str:
    """No rule fired: said, with the summary's verdict where it has one (a CPU run bound by gloo's collectives had
    a verdict and a reason in `summary`, and nothing here)."""
    said = "No explain rule fired on this trace."
    s = a.summary
    if not s.verdict or not s.reason:
        return said
    return f"{said} The summary's verdict is {s.verdict}: {s.reason.rstrip('.')}. `tracetui critical` shows its path."


def _text(f: Finding) -> str:
    return " ".join(p for p in (note(f), what_if_line(f)) if p)


def _names(a: Results, f: Finding, width: int | None) -> list[str]:
    """The names of the finding's events, each once, in the order marked, NAMED at most: the first always (cut to
    EXAMPLE_WIDTH; whole at width 0, no limit), the others while all fit in EXAMPLE_WIDTH; then "…" where more are
    left out, or may be (the events marked are some of those counted)."""
    ids = a.trace.x.name[np.asarray(f.events, np.int64)]
    _, first = np.unique(ids, return_index=True)
    order = np.sort(first)
    names = [a.trace.names[int(ids[k])] for k in order[: NAMED + 1]]
    shown = [names[0] if width == 0 else shorten(names[0], EXAMPLE_WIDTH)]
    for name in names[1:NAMED]:
        if len(", ".join([*shown, name])) > EXAMPLE_WIDTH:
            break
        shown.append(name)
    return shown + ["…"] if len(order) > len(shown) or f.count > len(f.events) else shown
