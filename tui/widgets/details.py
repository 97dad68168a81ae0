"""The details panel: everything about the selected event, formatted at render time."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..fmt import fmt_dur, fmt_memory, fmt_number, short_name
from ..model.analyses.achieved import EventRoof
from ..model.analyses.details import Details
from ..model.analyses.explain import Finding
from ..model.analyses.memory import MemoryAt
from ..tables.explain import note as explain_note
from ..tables.roofline import fmt_count, fmt_rate

MAX_ARG_CHARS = 160


def memory_text(memory: list[MemoryAt]) -> Text:
    lines = []
    for m in memory:
        reserved = f", {fmt_memory(m.reserved)} reserved" if m.reserved >= 0 else ""
        sign = "+" if m.change > 0 else "-"
        lines.append(
            f"{m.device} {fmt_memory(m.allocated)} allocated{reserved} (last: {m.op} {sign}{fmt_memory(abs(m.change))})"
        )
    return Text("\n".join(lines))


def replay_text(d: Details) -> str:
    """A graph launch's replay, a replayed activity's graph launch, or a capture copy's mark."""
    if d.replayed_by:
        return f"replayed by {d.replayed_by[1]} (event {d.replayed_by[0]}): a CUDA/HIP graph, not launched one by one"
    if d.copied:
        return "replayed: copied from the graph's capture to credit its kernels; no CPU work of its own"
    r = d.replay
    if r is None or not r.count:
        return "replays no device activity: its records were lost (the trace has none with its correlation id)"
    top = "; ".join(f"{short_name(name)[:50]} ×{n} {fmt_dur(int(us * 1000))}" for name, n, us in r.top)
    return (
        f"replays {r.count:,} kernels, {fmt_dur(int(r.device_us * 1000))} of GPU time, over "
        f"{fmt_dur(int(r.span_us * 1000))}; top: {top}"
    )


def roofline_text(r: EventRoof) -> Text:
    """FLOPs, bytes, achieved TFLOP/s and % of roof of an op call, or a kernel's share of its call's work."""
    a, row = r.achieved, r.row
    pct = "% of roof: no roofs for this GPU" if a.pct_of_roof is None else f"{a.pct_of_roof:.1f}% of roof"
    bound = f" ({row.bound}-bound, {row.roof_dtype or row.dtype})" if row.bound else f" ({row.dtype})"
    whose = f"; {100 * r.share:.0f}% of the device time of the {row.name} call that launched it" if r.launched else ""
    return Text(
        f"{fmt_count(a.flops, 'FLOP')}, {fmt_count(a.bytes, 'B')}: {fmt_rate(a.tflops)} TFLOP/s, {pct}{bound}{whose}"
    )


def details_renderable(
    d: Details,
    notes: list[Finding] | None = None,
    memory: list[MemoryAt] | None = None,
    roofline: EventRoof | None = None,
) -> Group:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold #9aa3ad", no_wrap=True)
    grid.add_column()
    grid.add_row("name", Text(short_name(d.name), style="bold"))
    grid.add_row("where", Text(f"{d.category} on {d.track}"))
    own = "self: computing …" if d.self_ns is None else f"self {fmt_dur(d.self_ns)}"
    grid.add_row("time", Text(f"starts at {fmt_dur(d.start_ns)}, lasts {fmt_dur(d.dur_ns)} ({own})"))
    if d.launch:
        grid.add_row(
            "launched by",
            Text(f"{d.launch[1]} (event {d.launch[0]}); launch → start {fmt_dur(d.launch_latency_ns or 0)}"),
        )
    if d.footprint:
        grid.add_row("footprint", Text(", ".join(f"{k} {fmt_number(v)}" for k, v in d.footprint.items())))
    if d.kernels:
        shown = "; ".join(f"{name[:60]} {fmt_dur(dur)}" for _, name, dur in d.kernels[:5])
        more = f" (+{len(d.kernels) - 5} more)" if len(d.kernels) > 5 else ""
        grid.add_row("GPU work", Text(f"{len(d.kernels)} launched: {shown}{more}"))
    if roofline is not None:
        grid.add_row("roofline", roofline_text(roofline))
    if d.replay is not None:
        grid.add_row("graph", Text(replay_text(d)))
    if d.replayed_by or d.copied:
        grid.add_row("graph", Text(replay_text(d), style="italic #e5c07b"))
    if d.stack:
        grid.add_row("your code", Text("\n".join(f"{'  ' * k}{frame}" for k, frame in enumerate(d.stack[-8:]))))
    if d.overlaps:
        pairs = "; ".join(f"{a[:40]} and {b[:40]} overlap by {fmt_dur(ns)}" for a, b, ns in d.overlaps[:3])
        grid.add_row(
            "negative self",
            Text(
                f"its children run at the same time ({pairs}), so their times add up to more than it lasts: a frame "
                "and the annotation or op it opens overlap on one row. torch's table counts them the same way "
                "(its Self CPU is negative too).",
                style="italic #e5c07b",
            ),
        )
    if memory:
        grid.add_row("memory", memory_text(memory))
    for note in notes or []:
        grid.add_row("note", Text(explain_note(note), style="italic #e5c07b"))
    if short_name(d.name) != d.name:
        grid.add_row("full name", Text(d.name, style="dim"))
    for key, value in d.args.items():
        text = str(value)
        grid.add_row(Text(str(key)), Text(text if len(text) <= MAX_ARG_CHARS else text[: MAX_ARG_CHARS - 1] + "…"))
    return Group(grid)


class DetailsPanel(VerticalScroll, can_focus=True):
    """Shows Details for the selection (attribute down: call show()); scrolls, and says when there is more."""

    HELP_NAME = "Details panel"
    BINDINGS = [
        Binding("up,k", "scroll_up", "Scroll up", show=False, id="details.up"),
        Binding("down,j", "scroll_down", "Scroll down", show=False, id="details.down"),
    ]

    def compose(self):
        yield Static(Text("Select an event (arrows, hjkl or a click).", style="dim"), id="details-body")

    def show(
        self,
        details: Details | None,
        notes: list[Finding] | None = None,
        memory: list | None = None,
        roofline: EventRoof | None = None,
    ) -> None:
        self.details = details
        body = self.query_one("#details-body", Static)
        body.update(
            details_renderable(details, notes, memory, roofline)
            if details
            else Text("Select an event (arrows, hjkl or a click).", style="dim")
        )
        self.call_after_refresh(self._say_more)

    def _say_more(self) -> None:
        hidden = int(self.max_scroll_y - self.scroll_y)
        self.border_title = f"↓ {hidden} more lines: Enter, then ↓ to scroll; Esc closes" if hidden > 0 else ""

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._say_more()
