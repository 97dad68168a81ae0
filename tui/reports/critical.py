"""`tracetui critical`: what bounds a step, as bars, the top of the path, advice, notes and what-if."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.analyses.critical import CLASSES, Spec
from ..model.analyses.results import Results
from ..names import short_name
from ..tables import critical as C
from ..tables.critical import critical_document as critical_document  # the API and the MCP server call it
from .formats import grid, terminal_width, to_json, wrap_prose

BAR = 24  # characters of the longest bar
NAME_WIDTH = 72  # a long kernel name folded (f<…>(…)) to this many characters
EIGHTHS = " ▏▎▍▌▋▊▉"


def render_critical(
    a: Results,
    fmt: str,
    *,
    step: int | None = None,
    annotation: str | None = None,
    instance: int = 0,
    what_if: Sequence[str | Spec] = (),
) -> str:
    report = C.compute(a, step=step, annotation=annotation, instance=instance, what_if=what_if)
    if fmt == "json":
        return to_json(C.document(report))
    width = terminal_width()
    if report.job is not None:
        return _job(a, fmt, report, width)
    return render_path(a, fmt, report, width)


def render_path(a: Results, fmt: str, report, width: int | None) -> str:
    """One path: its bars, its top, advice, notes, and the what-if."""
    p = report.path
    head = f"Critical path of {p.window} ({C.when(p.start_ns)} to {C.when(p.end_ns)} into the trace): {C.when(p.length_ns)}"
    if a.trace.job:
        head += f" (rank {p.rank})"
    out = [head, C.verdict_line(a, p), "", _breakdown(fmt, p, width), "", _top(a, fmt, p, width)]
    out += _prose("Advice", C.advice(p), fmt, width) + _prose("Notes", C.notes(p), fmt, width)
    if report.whatif is not None:
        w = report.whatif
        out += _prose("What if", [C.sentence(w), *C.whatif_notes(w)], fmt, width)
        if w.after.length_ns > 0:  # a path of no time has no breakdown to show
            out += ["", _breakdown(fmt, w.after, width, "After")]
    return "\n".join(out)


def _job(a: Results, fmt: str, report, width: int | None) -> str:
    job = report.job
    held = job.held_ns()
    rows = []
    for r, p in job.paths.items():
        own = job.own_breakdown(r)
        total = sum(own.values()) or 1
        cls = max(own, key=lambda c: own[c])
        waited = sum(w.on_path_ns for w in job.waits if w.rank == r)
        rows.append([str(r), C.when(p.length_ns), cls, f"{own[cls] / total:.0%}", C.when(waited), C.when(held[r])])
    heads = ["Rank", "Path", "Own path bound by", "Share", "Waits for others", "Others wait for it"]
    foot = [f"rank {r} left out: {why}" for r, why in job.left_out.items()]
    head = (
        f"A job of {len(job.paths) + len(job.left_out)} ranks, {job.window} (collectives matched by {job.matched_by})"
    )
    out = [head, "", grid(fmt, heads, rows, foot, width, [True, False, True, False, False, False])]
    out += _prose("The job", [C.job_verdict(job)], fmt, width)
    single = render_path(a, fmt, C.Report(report.path), width)
    return "\n".join(out + ["", f"Rank {job.bound_rank}'s path:", single])


def _bar(share: float) -> str:
    eighths = round(share * BAR * 8)
    return "█" * (eighths // 8) + (EIGHTHS[eighths % 8] if eighths % 8 else "")


def _breakdown(fmt: str, p, width: int | None, title: str = "Bound by") -> str:
    total = p.length_ns or 1
    rows = [
        [C.TITLES[c], c, C.when(p.breakdown[c]), f"{p.breakdown[c] / total:.1%}", _bar(p.breakdown[c] / total)]
        for c in sorted(CLASSES, key=lambda c: -p.breakdown[c])
        if p.breakdown[c] > 0
    ]
    heads = [title, "Class", "Time", "Share", ""]
    return grid(fmt, heads, rows, [f"Total: {C.when(p.length_ns)}"], width, [True, True, False, False, True])


def _top(a: Results, fmt: str, p, width: int | None) -> str:
    total = p.length_ns or 1
    room = NAME_WIDTH if width is None else max(24, min(NAME_WIDTH, width - 40))
    rows = [
        [
            short_name(name, room) + C.own_time(a.trace, name, kind, w),
            kind,
            C.when(ns),
            f"{ns / total:.1%}",
            C.TITLES[b],
        ]
        for name, kind, b, ns, w in C.top_items(p)
    ]
    more = len({(it.name, it.kind, it.bound_by) for it in p.items}) - len(rows)
    foot = [f"… {more:,} more (--format json lists the whole path: {len(p.items):,} items)"] if more > 0 else []
    return grid(
        fmt, ["On the path", "Kind", "Time", "Share", "Bound by"], rows, foot, width, [True, True, False, False, True]
    )


def _prose(title: str, lines: list[str], fmt: str, width: int | None) -> list[str]:
    if not lines:
        return []
    bullets = [f"* {line}" for line in lines]
    return [
        "",
        f"{title}:" if fmt != "md" else f"**{title}**",
        *(bullets if fmt == "md" else wrap_prose(bullets, width)),
    ]
