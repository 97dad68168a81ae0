"""`tracetui critical`: what bounds a step, as bars, the top of the path, advice, notes and what-if."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.analyses.critical import Spec
from ..model.analyses.results import Results
from ..model.words import duration_as
from ..tables import critical as C
from ..tables import critical_path as P
from ..text.fmt import plural
from .formats import table, terminal_width, to_json, wrap, wrap_prose, written_doc

critical_document = written_doc(C.critical_document)  # the API and the MCP server call it: the JSON's figures
NAME_WIDTH = 72  # a long name cut in the middle to this many characters (no terminal to fit)


def render_critical(
    a: Results,
    fmt: str,
    *,
    step: int | None = None,
    annotation: str | None = None,
    instance: int = 0,
    what_if: Sequence[str | Spec] = (),
    python_frames: bool = False,
) -> str:
    """python_frames: Python frames as rows of the path's table (else each frame's time is its op's)."""
    report = C.compute(a, step=step, annotation=annotation, instance=instance, what_if=what_if)
    if fmt == "json":
        return to_json(C.document(report, a, python_frames))
    width = terminal_width()
    if report.job is not None:
        return _job(a, fmt, report, width, python_frames)
    return render_path(a, fmt, report, width, python_frames)


def render_path(a: Results, fmt: str, report, width: int | None, python_frames: bool = False) -> str:
    """One path: its bars, its top, advice, notes, and the what-if."""
    p = report.path
    start, end = (duration_as(ns / 1000.0, p.end_ns / 1000.0) for ns in (p.start_ns, p.end_ns))  # the end's unit
    head = f"Critical path of {p.window} ({start} to {end} into the trace): {C.when(p.length_ns)}"  # as its Total
    if a.trace.job:
        head += f" (rank {p.rank})"
    groups, folded = C.shown_groups(a, p, python_frames)
    top = _top(fmt, p, groups, folded, width)
    out = [*wrap([head, C.verdict_line(a, p)], width), "", _breakdown(fmt, p, width), "", top]
    out += _prose("Advice", C.advice(p, groups, a.uses), fmt, width) + _prose("Notes", C.notes(p), fmt, width)
    if report.whatif is not None:
        w = report.whatif
        out += _prose("What if", [C.sentence(w), *C.whatif_notes(w)], fmt, width)
        if w.after.length_ns > 0:  # a path of no time has no breakdown to show
            out += ["", _breakdown(fmt, w.after, width, "After")]
    return "\n".join(out)


def _job(a: Results, fmt: str, report, width: int | None, python_frames: bool) -> str:
    job = report.job
    head = (
        f"A job of {len(job.paths) + len(job.left_out)} ranks, {job.window} (collectives matched by {job.matched_by})"
    )
    foot = [f"rank {r} left out: {why}" for r, why in job.left_out.items()]
    out = [*wrap([head], width), "", table(fmt, P.rank_columns(), P.rank_rows(job), job, 0, foot, width)]
    out += _prose("The job", [C.job_verdict(job)], fmt, width)
    single = render_path(a, fmt, C.Report(report.path), width, python_frames)
    return "\n".join(out + ["", f"Rank {job.bound_rank}'s path:", single])


def _breakdown(fmt: str, p, width: int | None, title: str = "Bound by") -> str:
    foot = [f"Total: {C.when(p.length_ns)}"]
    return table(fmt, P.breakdown_columns(title), P.breakdown_classes(p), p, 0, foot, width)


def _top(fmt: str, p, groups: list, folded: bool, width: int | None) -> str:
    """The path's groups with the most time (tables/critical.py's columns), and how many more there are; a Python
    frame's stretch is its op's when folded (without --python-frames, as the viewer's path view, frames hidden)."""
    shown = groups[: C.TOP]
    more = len(groups) - len(shown)
    whole = plural(len(p.items), "stretch", "stretches")
    foot = [f"… {more:,} more (--format json lists the whole path: {whole})"] if more > 0 else []
    if folded:
        foot.append("Python frames: each one's time is its op's (--python-frames lists them)")
    return table(fmt, P.group_columns(), shown, p, NAME_WIDTH, foot, width)


def _prose(title: str, lines: list[str], fmt: str, width: int | None) -> list[str]:
    if not lines:
        return []
    bullets = [f"* {line}" for line in lines]
    return [
        "",
        f"{title}:" if fmt != "md" else f"**{title}**",
        *(bullets if fmt == "md" else wrap_prose(bullets, width)),
    ]
