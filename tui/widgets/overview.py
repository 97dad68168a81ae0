"""The overview: the summary in plain words, steps as bars, the top ops and kernels."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..model.analyses.explain.readings import fact_readings, readings
from ..model.analyses.no_gpu import no_gpu
from ..model.analyses.results import Results
from ..model.steps import is_slow
from ..tables import summary as S
from ..tables.explain import counted
from ..tables.explain import note as explain_note
from ..tables.explain_savings import biggest_saving, headline, what_if_line
from ..tables.summary import has_device_steps, shown_steps, typical_note
from ..text.fmt import fmt_memory, fmt_time, plurals
from ..text.names import shorten, shorten_names
from ..text.sanitize import visible, visible_lines

BAR = "█"
TOP = 5
NAME_WIDTH = 70  # an op's or kernel's name, cut at a word with …
STEPS_TITLE = "\nSteps (a bar lasts until the step's CPU span and the GPU work it launched both ended; red: much longer than the typical step)"
STEPS_TITLE_CPU = "\nSteps (red: much longer than the typical step)"


def step_bars(a: Results, width: int = 40) -> Table:
    """A bar per step, as long as the user waited for it; its CPU span and its GPU work beside it."""
    steps, gpu = a.summary.steps, has_device_steps(a.summary)
    shown, hidden = shown_steps(steps)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True, style="#8a8f98")
    longest = max((s.elapsed_us for s in steps), default=0) or 1
    median = a.summary.typical.us
    for s in shown:
        n = max(int(round(width * s.elapsed_us / longest)), 1)
        style = "#e06c75" if is_slow(s.elapsed_us, median) else "#61afef"
        parts = f"CPU {fmt_time(s.dur_us)}, GPU {fmt_time(s.device_us)}" if gpu else ""
        grid.add_row(Text(s.name), Text(BAR * n, style=style), fmt_time(s.elapsed_us), parts)
    if hidden:
        grid.add_row(
            Text(f"… {hidden:,} more", style="dim"),
            Text(f"(the first 4 and the slowest are shown; typical step {fmt_time(median)})", style="dim"),
            "",
            "",
        )
    return grid


RANK_STEP_CELLS = 10  # the longest step of any rank is this many cells wide
RANK_STEPS_SHOWN = 6


def rank_bars(a: Results) -> Table:
    """One row per rank: a bar per step (stragglers red), the median step, collectives and what compute hides."""
    rows = a.rank_rows
    longest = max((st.elapsed_us for r in rows for st in r.steps), default=0) or 1
    grid = Table.grid(padding=(0, 1))
    for justify in ("left", "left", "right", "right", "left"):
        grid.add_column(justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for r in rows:
        style = "#e06c75" if r.straggler else "#61afef"
        bars = Text()
        for st in r.steps[:RANK_STEPS_SHOWN]:
            bars.append(BAR * max(int(round(RANK_STEP_CELLS * st.elapsed_us / longest)), 1), style=style).append(" ")
        if len(r.steps) > RANK_STEPS_SHOWN:
            bars.append(f"+{len(r.steps) - RANK_STEPS_SHOWN}", style="dim")
        comm = f"comm {fmt_time(r.comm_us)}, {r.overlap_us / r.comm_us:.0%} hidden" if r.comm_us else "no collectives"
        tag = Text("straggler", style="bold #e06c75") if r.straggler else Text("")
        median = f"typical step {fmt_time(r.step_us)}"
        grid.add_row(f"rank {r.rank}", bars or Text("no steps", style="dim"), median, comm, tag)
    return grid


def _job_section(a: Results) -> list:
    j = a.job
    if j is None:
        return []
    from ..tables.ranks import job_lines

    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="#9aa3ad", no_wrap=True)
    facts.add_column()
    for label, text in job_lines(j):
        if label != "Verdict":  # said at the top
            facts.add_row(label, visible_lines(text))
    title = f"\nRanks: a job of {j.ranks} (a red bar is a straggler's step; C compares two ranks)"
    return [Text(title, style="bold"), rank_bars(a), facts] + [
        Text("⚠ " + visible_lines(w), style="#e5c07b") for w in j.warnings
    ]


def _memory_section(a: Results) -> list:
    if not a.memory:
        return []
    from ..tables.memory import peak_op

    t = Table.grid(padding=(0, 2))
    for d in a.memory:
        reserved = f" ({fmt_memory(d.peak_reserved_bytes)} reserved)" if d.peak_reserved_bytes >= 0 else ""
        t.add_row(
            Text(visible(d.device), style="#9aa3ad"),
            f"peak {fmt_memory(d.peak_allocated_bytes)} allocated{reserved} at {fmt_time(d.peak_ts_us)}",
            Text(shorten(visible(peak_op(d)), NAME_WIDTH)),
        )
    return [Text("\nMemory: the peak per device and the op running at it (tracetui memory for more)", style="bold"), t]


def overview_renderable(a: Results) -> Group:
    s = a.summary
    parts: list = [Text(visible_lines(f"Verdict: {s.verdict}"), style="bold #e5c07b")]  # verdicts may name ops
    if a.job is not None:
        parts.append(Text(visible_lines(f"Job verdict: {a.job.verdict}"), style="bold #e5c07b"))
    parts += _critical_lines(a)
    parts += [
        Text("• " + visible_lines(plurals(r))) for r in readings(s, a.uses)
    ]  # counts read one way (`19 outliers`)
    best = biggest_saving(a.findings)  # the view needs the findings: they are ready
    parts += [Text("• " + visible_lines(best))] if best else []
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="#9aa3ad", no_wrap=True)
    facts.add_column()
    why = fact_readings(s)
    for key, label, value in S.lines(s):
        if key != "verdict":
            cell = Text(visible_lines(value))
            if key in why:
                cell.append("\n" + visible_lines(why[key]), style="italic #8a8f98")
            facts.add_row(label, cell)
    parts += [Text(""), facts] + _job_section(a)
    if s.steps and a.job is None:
        parts += [Text(STEPS_TITLE if has_device_steps(s) else STEPS_TITLE_CPU, style="bold"), step_bars(a)]
        parts.append(Text(typical_note(s.typical), style="dim"))  # which typical step the red is against
    parts += _memory_section(a)
    parts += [
        Text("\nTop ops by " + ("GPU time launched below them" if a.ops.has_device else "CPU total"), style="bold"),
        _top_ops(a),
        Text("\nTop GPU kernels (total time, share of GPU time, calls)", style="bold"),
        _top_kernels(a),
        Text("\nWhat this trace shows", style="bold"),
        _findings(a),
    ]
    return Group(*parts)


def _critical_lines(a: Results) -> list:
    """The critical path's breakdown under the verdict: its length and a small bar per class (8 shows the path)."""
    p = a.peek(Results.critical)  # computed in the background; the overview is redrawn when it is ready
    if p is None or not p.length_ns:
        return []
    from ..tables import critical as C

    line = Text(C.status(p)[0].upper() + C.status(p)[1:] + " (8 shows it):", style="#e5c07b")
    for title, _time, share in C.breakdown_rows(p)[:4]:
        if share >= 0.005:
            line.append(f"  {title} ").append(C.bar(share, 8) or "▏", style="#ff5f87").append(f" {share:.0%}")
    return [line]


def _findings(a: Results) -> Table | Text:
    if not a.findings:
        return Text("no patterns from the explain rules", style="dim")
    t = Table.grid(padding=(0, 1))
    t.add_column(no_wrap=True, style="#e5c07b")
    t.add_column()
    for f in a.findings:  # the biggest saving first (explain/savings.py)
        where = f" ({counted(f, [])})" if f.count > 1 else ""  # "15 calls", "1,089 gaps": as explain heads it
        saves = f" — {headline(f)}" if f.saving is not None else ""
        text = Text(visible(f.title + where + saves), style="bold").append("  " + visible(explain_note(f)), style="")
        if f.saving is not None:
            text.append("\n" + visible(what_if_line(f)), style="italic #8a8f98")
        t.add_row("•", text)
    return t


def _top_ops(a: Results) -> Table:
    t = Table.grid(padding=(0, 2))
    key = "device_total_us" if a.ops.has_device else "cpu_total_us"
    shown = (r for r in a.ops.rows if not r.is_annotation and not r.is_python and not r.is_device)  # kernels: below
    rows = sorted(shown, key=lambda r: -getattr(r, key))[:TOP]
    for r, name in zip(rows, shorten_names([visible(r.name) for r in rows], NAME_WIDTH), strict=True):
        t.add_row(Text(name), fmt_time(getattr(r, key)), f"×{r.count}")
    return t


def _top_kernels(a: Results) -> Table | Text:
    if not a.kernels:
        s = a.summary
        missing = "none recorded: the device records are missing (see the verdict)"
        return Text(missing if s.device_records_missing else f"none. {no_gpu(s.cut_short)}.", style="dim")
    t = Table.grid(padding=(0, 2))
    rows = a.kernels[:TOP]
    for r, name in zip(rows, shorten_names([visible(r.name) for r in rows], NAME_WIDTH), strict=True):
        t.add_row(Text(name), fmt_time(r.total_us), f"{r.pct_gpu:.1f}%", f"×{r.count}")
    return t


class OverviewView(VerticalScroll):
    def __init__(self, analysis: Results, **kwargs) -> None:
        super().__init__(**kwargs)
        self.analysis = analysis

    def compose(self):
        yield Static(overview_renderable(self.analysis), id="overview-body")

    def redraw(self) -> None:
        """A result it shows became ready after it was made (the critical path): draw it again."""
        self.query_one("#overview-body", Static).update(overview_renderable(self.analysis))
