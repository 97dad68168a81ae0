"""The details panel: everything about the selected event, formatted at render time."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ..model.analyses.details import Details, Launched
from ..model.analyses.explain.rules import Finding
from ..model.analyses.memory import MemoryAt
from ..model.analyses.roofline.achieved import EventRoof
from ..tables.explain import note as explain_note
from ..tables.kernels import OCCUPANCY, SHARED, footprint_figure
from ..tables.rates import FLOP_RATES, rate_text
from ..tables.roofline import dtype_text, fmt_count
from ..text.fmt import fmt_dur, fmt_memory, plural
from ..text.names import short_name, shorten, shorten_names
from ..text.sanitize import visible, visible_data

MAX_ARG_CHARS = 160
NOTHING = "Select an event (arrows, hjkl or a click)."
LEGEND_TITLE = "Reading the timeline (said once: ? says it again, with every key)"
NAME_WIDTH = 60  # a kernel's name in a list, cut at a word with … (f shows them in full)
FULL_HINT = "Enter, then f: full names"


@dataclass(frozen=True)
class Merged:
    """What a tree row stands for when it is more than one event (same-name calls merged, a run of steps, a
    thread's outermost events): the panel says so above the one event it details, the first of them."""

    count: int
    what: str  # "calls", "steps", ...
    total_ns: int
    self_ns: int
    gpu_ns: int
    shortest_ns: int
    longest_ns: int


def merged_text(m: Merged) -> Text:
    """`26 calls: total 1.16ms · self 178us · GPU 198us, 12.1us to 65.4us each; below, the first of them`: the
    row's figures (as the tree shows them), how long they ran, and which one the rows below are about."""
    gpu = f" · GPU {fmt_dur(m.gpu_ns)}" if m.gpu_ns else ""
    spread = (
        fmt_dur(m.longest_ns)
        if m.shortest_ns == m.longest_ns
        else f"{fmt_dur(m.shortest_ns)} to {fmt_dur(m.longest_ns)}"
    )
    return Text.assemble(
        (f"{m.count:,} {m.what}", "bold"),
        f": total {fmt_dur(m.total_ns)} · self {fmt_dur(m.self_ns)}{gpu}, {spread} each; below, the first of them",
    )


def memory_text(memory: list[MemoryAt]) -> Text:
    lines = []
    for m in memory:
        reserved = f", {fmt_memory(m.reserved)} reserved" if m.reserved >= 0 else ""
        sign = "+" if m.change > 0 else "-"
        lines.append(
            f"{m.device} {fmt_memory(m.allocated)} allocated{reserved} (last: {m.op} {sign}{fmt_memory(abs(m.change))})"
        )
    return Text("\n".join(lines))


def _names(names: list[str], full: bool, width: int = NAME_WIDTH) -> list[str]:
    """Names for a list: whole, or cut at a word boundary with … and kept apart from each other."""
    return names if full else shorten_names(names, width)


def launched_text(w: Launched, full: bool = False) -> Text:
    """61 launched (60 kernels, 1 copy), 309us on the GPU, then the names that took the most time, one a line."""
    kinds = [(w.kernels, "kernel", "kernels"), (w.copies, "copy", "copies"), (w.sets, "set", "sets")]
    parts = ", ".join(f"{n:,} {one if n == 1 else many}" for n, one, many in kinds if n)
    names = _names([name for name, _, _ in w.top], full)
    lines = [f"{w.count:,} launched ({parts}), {fmt_dur(w.device_ns)} on the GPU; the most time:"]
    lines += [f"  {name} ×{n:,} {fmt_dur(ns)}" for name, (_, n, ns) in zip(names, w.top, strict=True)]
    if w.names > len(w.top):
        lines.append(f"  and {w.names - len(w.top):,} more name{'s' if w.names - len(w.top) > 1 else ''}")
    text = Text("\n".join(lines), overflow="fold")
    cut = not full and any(n != name for n, (name, _, _) in zip(names, w.top, strict=True))
    return text.append(f"  ({FULL_HINT})", style="dim") if cut else text


def launch_text(d: Details) -> str:
    """The call that launched it, and its launch-to-start latency where it is a launch of its own (a graph replay's
    activities after its first are nodes the GPU ran in order: no latency of their own). Only for a launched one."""
    assert d.launch is not None
    if d.launch_latency_ns is None:
        return f"{d.launch[1]}; a node of a graph replay, no launch → start of its own ([ goes to the launch)"
    return f"{d.launch[1]}; launch → start {fmt_dur(d.launch_latency_ns)} ([ goes to the launch)"


def replay_text(d: Details, full: bool = False) -> str:
    """A graph launch's replay, a replayed activity's graph launch, or a capture copy's mark."""
    if d.replayed_by:
        return f"replayed by {d.replayed_by[1]}: a CUDA/HIP graph, not launched one by one"
    if d.copied:
        return "replayed: copied from the graph's capture to credit its kernels; no CPU work of its own"
    r = d.replay
    if r is None or not r.count:
        return "replays no device activity: its records were lost (the trace has none with its correlation id)"
    names = _names([name for name, _, _ in r.top], full, 50)
    top = "; ".join(f"{name} ×{n} {fmt_dur(int(us * 1000))}" for name, (_, n, us) in zip(names, r.top, strict=True))
    return (
        f"replays {plural(r.count, 'kernel')}, {fmt_dur(int(r.device_us * 1000))} of GPU time, over "
        f"{fmt_dur(int(r.span_us * 1000))}; top: {top}"
    )


def no_roof(device_us: float, on_cpu: bool = False) -> str:
    """Why an op has no % of roof: a CPU capture (its rates are the CPU's), no device work, or its GPU's roofs are
    not known."""
    if on_cpu:
        return "no % of roof: a CPU capture (the roofs are a GPU's)"
    if device_us <= 0:
        return "no % of roof: no device time (the roofs are a GPU's)"
    return "no % of roof: this GPU's roofs are not known (tracetui roofline --gpu NAME or --peaks FILE)"


FOOTPRINT_WORDS = {  # a kernel's launch args in words; an estimate of 0 means none was made, and is left out
    "registers per thread": "registers/thread",
    SHARED: "shared mem",
    "blocks per SM": "blocks/SM",
    "warps per SM": "warps/SM",
    OCCUPANCY: "occupancy (est.)",
}


def footprint_text(footprint: dict[str, str]) -> str:
    """grid [1, 1, 1], block [128, 1, 1], registers/thread 32, shared mem 0 B, occupancy (est.) 50%"""
    out = []
    for key, value in footprint.items():
        figure = footprint_figure(key, value)
        if key == OCCUPANCY:
            if figure == "-":
                continue
            figure += "%"
        out.append(f"{FOOTPRINT_WORDS.get(key, key)} {figure}")
    return ", ".join(out)


def roofline_text(r: EventRoof) -> Text:
    """FLOPs, bytes, achieved FLOP/s (in the unit it reads best in) and % of roof of an op call, or a kernel's share
    of its call's work."""
    a, row = r.achieved, r.row
    pct = f"{a.pct_of_roof:.1f}% of roof" if a.pct_of_roof is not None else no_roof(a.device_us, r.on_cpu)
    bound = f" ({row.bound}-bound, {dtype_text(row)})" if row.bound else f" ({dtype_text(row)})"  # the table's words
    whose = f"; {100 * r.share:.0f}% of the device time of the {row.name} call that launched it" if r.launched else ""
    return Text(
        f"{fmt_count(a.flops, 'FLOP')}, {fmt_count(a.bytes, 'B')}: {rate_text(a.tflops, FLOP_RATES)}, {pct}{bound}{whose}"
    )


def details_renderable(
    d: Details,
    notes: list[Finding] | None = None,
    memory: list[MemoryAt] | None = None,
    roofline: EventRoof | None = None,
    full: bool = False,
    merged: Merged | None = None,
) -> Group:
    """merged: the tree row the event is the first of (the panel beside the tree); None for a single event."""
    d, notes, memory, roofline = visible_data((d, notes, memory, roofline))  # names, args, frames: data, shown
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold #9aa3ad", no_wrap=True)
    grid.add_column(overflow="fold")  # a long name wraps over lines, never ends in …
    grid.add_row("name", Text(d.name if full else short_name(d.name), style="bold"))
    if merged is not None:
        grid.add_row("tree row", merged_text(merged))
    grid.add_row("where", Text(f"{d.category} on {d.track}"))
    own = "self: computing …" if d.self_ns is None else f"self {fmt_dur(d.self_ns)}"
    grid.add_row("time", Text(f"starts {fmt_dur(d.start_ns)} into the trace, lasts {fmt_dur(d.dur_ns)} ({own})"))
    if d.launch:
        grid.add_row("launched by", Text(launch_text(d)))
    if d.footprint:
        grid.add_row("footprint", Text(footprint_text(d.footprint)))
    if d.launched is not None and d.launched.count:
        grid.add_row("GPU work", launched_text(d.launched, full))
    if roofline is not None:
        grid.add_row("roofline", roofline_text(roofline))
    if d.replay is not None:
        grid.add_row("graph", Text(replay_text(d, full)))
    if d.replayed_by or d.copied:
        grid.add_row("graph", Text(replay_text(d, full), style="italic #e5c07b"))
    if d.stack:
        grid.add_row("your code", Text("\n".join(f"{'  ' * k}{frame}" for k, frame in enumerate(d.stack[-8:]))))
    if d.overlaps:
        cut = (lambda n: n) if full else (lambda n: shorten(n, 40))
        pairs = "; ".join(f"{cut(a)} and {cut(b)} overlap by {fmt_dur(ns)}" for a, b, ns in d.overlaps[:3])
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
    if short_name(d.name) != d.name and not full:  # (f: the name row is the full name)
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
        Binding("f", "toggle_full_names", "Full names", id="details.full_names"),
    ]
    full_names = False

    class LegendShown(Message):
        """The first open's legend is on screen (the app marks it seen: a view without this panel did not show it)."""

    def __init__(self, *, legend: str | None = None, notes: list[tuple[str, str]] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.legend = legend  # the first open's legend, said here until the first selection (under the lanes, not over)
        self.notes = notes or []  # what the load had to say, (level, text): here whenever nothing is selected
        self.legend_told = False  # LegendShown posted

    def on_show(self) -> None:
        """The panel is on screen (beside the timeline or the tree): the legend, while it is said, is seen."""
        if self.legend and not self.legend_told:
            self.legend_told = True
            self.post_message(self.LegendShown())

    def compose(self):
        yield Static(self._nothing(), id="details-body")

    def _nothing(self) -> Text:
        """What the panel says with nothing selected: the load's notes (a toast covered the lanes and the legend at
        80x24), then the legend, the first time tracetui opens a trace, then how to select."""
        said = [
            Text.assemble(
                (f"{level}: ", "bold yellow" if level == "warning" else "bold"), visible(text)
            )  # names a path
            for level, text in self.notes
        ]
        if self.legend:
            said.append(Text.assemble((LEGEND_TITLE, "bold"), "\n", self.legend))
        return Text("\n").join([*said, Text(NOTHING, style="dim")])

    def show(
        self,
        details: Details | None,
        notes: list[Finding] | None = None,
        memory: list | None = None,
        roofline: EventRoof | None = None,
        merged: Merged | None = None,
    ) -> None:
        """merged: the tree row that details is the first event of, when the row stands for more than one."""
        self.details = details
        self._shown = (notes, memory, roofline, merged)
        body = self.query_one("#details-body", Static)
        if details:
            self.legend = None  # read: the help has it
        body.update(
            details_renderable(details, notes, memory, roofline, self.full_names, merged)
            if details
            else self._nothing()
        )
        self.call_after_refresh(self._say_more)

    def action_toggle_full_names(self) -> None:
        """Names in the panel's lists whole (f again: cut to fit)."""
        self.full_names = not self.full_names
        if getattr(self, "details", None) is not None:
            self.show(self.details, *self._shown)

    def _say_more(self) -> None:
        hidden = int(self.max_scroll_y - self.scroll_y)
        how = "↓ scrolls" if self.has_focus_within else "Enter, then ↓ to scroll"  # (in it: Enter is said)
        self.border_title = f"↓ {hidden} more lines: {how}; Esc closes" if hidden > 0 else ""

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._say_more()

    def on_focus(self) -> None:
        self.call_after_refresh(self._say_more)

    def on_blur(self) -> None:
        self.call_after_refresh(self._say_more)

    def on_resize(self) -> None:
        """Entered, the panel takes more room (views/room.py): fewer lines are left below."""
        self.call_after_refresh(self._say_more)
