"""The details panel: everything about the selected event, formatted at render time."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from ..fmt import fmt_dur, fmt_memory, short_name
from ..model.analyses.details import Details
from ..model.analyses.memory import MemoryAt

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


def details_renderable(d: Details, notes: list[str] | None = None, memory: list[MemoryAt] | None = None) -> Group:
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
        grid.add_row("footprint", Text(", ".join(f"{k} {v}" for k, v in d.footprint.items())))
    if d.kernels:
        shown = "; ".join(f"{name[:60]} {fmt_dur(dur)}" for _, name, dur in d.kernels[:5])
        more = f" (+{len(d.kernels) - 5} more)" if len(d.kernels) > 5 else ""
        grid.add_row("GPU work", Text(f"{len(d.kernels)} launched: {shown}{more}"))
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
        grid.add_row("note", Text(note, style="italic #e5c07b"))
    if short_name(d.name) != d.name:
        grid.add_row("full name", Text(d.name, style="dim"))
    for key, value in d.args.items():
        text = str(value)
        grid.add_row(Text(str(key)), Text(text if len(text) <= MAX_ARG_CHARS else text[: MAX_ARG_CHARS - 1] + "…"))
    return Group(grid)


class DetailsPanel(Static):
    """Shows Details for the selection (attribute down: call show())."""

    DEFAULT_CSS = "DetailsPanel { height: auto; max-height: 35%; }"

    def show(self, details: Details | None, notes: list[str] | None = None, memory: list | None = None) -> None:
        self.details = details
        self.update(
            details_renderable(details, notes, memory)
            if details
            else Text("Select an event (arrows, hjkl or a click).", style="dim")
        )
