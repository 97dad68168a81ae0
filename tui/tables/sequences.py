"""The recurring kernel sequences table (`kernels --sequences`): per root op and the activities it launched, how
often, how long, the stack it comes from, and what fusing it would save on the critical path.

Not an SQL table: its rows depend on --min-length and --top, and each row's saving is a critical-path solve; the
per-op sequences `ops --kernels` lists are SQL's op_kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.analyses.explain.findings import Saving
from ..model.analyses.explain.savings import LITTLE
from ..model.analyses.fusion import FUSIBLE, GRAPH, LONG, STEP, SequenceRow
from ..text.fmt import fmt_time, plural, truncate
from ..text.names import shorten, shorten_names
from .base import KEEP, PINNED, Column, Field, SortKey, name_room
from .critical import when
from .explain_savings import NO_SAVING, why

NAME_WIDTH = 120
OP_WIDTH = 40
KERNEL_WIDTH = 32  # each kernel's name in a sequence, cut in the middle to this
SHOWN = 2  # kernels of a sequence shown in the text table (JSON and CSV: all)
SEQUENCE_MIN = 24  # the Sequence column's least room: its first kernel's short name and how many more
SEQUENCE_MAX = 72  # and its most: two kernels' names
FIGURES = 60  # about what the figures and the gaps between columns take beside the op and the sequence
MIN_KERNEL = 18  # a kernel's name is not cut shorter than this while a second one could be left out instead
TOLD_APART = 20  # narrower than this, a kernel's name is cut alone (its function kept), not told from the others
DEFAULT_MIN_LENGTH = 3  # HTA's min_pattern_len
DEFAULT_TOP = 10
SORTS = {  # the viewer's keys (the command ranks by device time, then takes --top)
    "device": SortKey("ranked_device_ns", means="device_total"),  # rows a fusion is plausible for first
    "count": SortKey("count", means="calls"),
    "length": SortKey("length", means="length"),
    "mean": SortKey("mean_ns", means="device_avg"),
    "saving": SortKey("saving_ns", means="fused_saving"),
    "launches": SortKey("launch_saving_ns", means="launch_saving"),
}
NOTE = (
    "A sequence: the kernels, copies and sets an op, annotation or module launched (itself and everything under it "
    "on its thread; a step: all its rank launched while it ran), in launch order, keyed by the op's name (a module "
    "by its class); of ops with the same launches the outermost stands for them. Total: the activities' device time "
    "over every occurrence. "
    "Fused saves: each occurrence in {window} with its kernels twice as fast (explain's rule for fusion: the "
    "intermediates stay on chip) and one launch instead of one per kernel, re-solved on its critical path; the "
    "launch calls taken away are CPU time, which Total leaves out, so a saving can pass Total (From launches: "
    "their part, the saving less the kernels' alone); "
    f"none (-) for a whole step or a sequence of more than {FUSIBLE} activities (no one fusion: a layer is about 50), "
    "listed after the others."
)
UNFUSIBLE = {
    STEP: "a whole step is no one fusion",
    LONG: f"more than {FUSIBLE} activities are no one fusion",
    GRAPH: "repeats within a CUDA graph's replay: not solved",
}


@dataclass
class Cut:
    """What the Sequence column needs besides its row: the kernels' names cut to KERNEL_WIDTH (told apart), and its
    room in a table fitted to a width (0: any room, SHOWN kernels at KERNEL_WIDTH)."""

    names: dict[str, str] = field(default_factory=dict)
    room: int = 0
    narrower: dict[int, dict[str, str]] = field(default_factory=dict)  # per width, the names cut to it, told apart

    def at(self, name: str, width: int) -> str:
        """A kernel's name cut to width, keeping the words that tell it from the others in the table."""
        if len(self.names.get(name, name)) <= width:
            return self.names.get(name, name)
        if width < TOLD_APART:  # too narrow for the words that differ: the function's name reads best
            return shorten(name, width)
        if width not in self.narrower:
            every = sorted(self.names)
            self.narrower[width] = dict(zip(every, shorten_names(every, width), strict=True))
        return self.narrower[width].get(name) or shorten(name, width)


def sequence_room(width: int | None, op_width: int = 0) -> int:
    """The Sequence column's room at a table width (None or 0: no limit): what the figures and the op (op_width, at
    most a third of the width as tables give a name) leave, SEQUENCE_MIN to SEQUENCE_MAX, so that it shows at 80
    columns too (the op cut and less essential figures dropped)."""
    if not width:
        return 0
    op = min(op_width, name_room(width)) if op_width else name_room(width)
    return max(SEQUENCE_MIN, min(SEQUENCE_MAX, width - op - FIGURES))


def cut_names(rows: list[SequenceRow], width: int | None = None) -> Cut:
    names = sorted({k for r in rows for k in r.kernels})
    op_width = max((len(r.label or r.op) for r in rows), default=0)
    return Cut(dict(zip(names, shorten_names(names, KERNEL_WIDTH), strict=True)), sequence_room(width, op_width))


def sequence(r: SequenceRow, cut: Cut) -> str:
    """Its first kernels' short names and how many more ('nchwToNhwcKernel<float, …>(…) +8'), in cut.room."""
    if not cut.room:
        return _sequence_text(r, [cut.names.get(k, k) for k in r.kernels[:SHOWN]])
    for shown in range(min(SHOWN, r.length), 0, -1):
        more = len(_more(r.length - shown))
        each = (cut.room - more - len(" → ") * (shown - 1)) // shown
        if each >= MIN_KERNEL or shown == 1:
            return _sequence_text(r, [cut.at(k, max(each, 1)) for k in r.kernels[:shown]])
    return ""


def _more(n: int) -> str:
    return f" +{n}" if n > 0 else ""


def _sequence_text(r: SequenceRow, names: list[str]) -> str:
    return " → ".join(names) + _more(r.length - len(names))


def number(r: SequenceRow) -> str:
    """' #2' after the op of rows that share it (never cut, so that they stay apart), else ''."""
    return r.label[len(r.op) :] if r.label.startswith(r.op) else ""


def stack(r: SequenceRow) -> str:
    """The stack above the op, its innermost end kept when it is cut ('…> nn.Module: Qwen2DecoderLayer')."""
    text = " > ".join(r.stack)
    if not text:
        return "-"
    return text if len(text) <= OP_WIDTH else "…" + text[-(OP_WIDTH - 1) :]


def saved(r: SequenceRow) -> str:
    """'1.20 ms (13%)', 'next to nothing', 'nothing', or why none was solved."""
    s = r.saving
    if not isinstance(s, Saving):
        return "-"
    if s.saving_ns <= 0:
        return "nothing"
    if s.share < LITTLE:
        return f"{when(s.saving_ns)} (<{LITTLE:.0%})"
    return f"{when(s.saving_ns)} ({s.share:.0%})"


def saving_words(r: SequenceRow) -> str:
    """Why fusing it saves (next to) nothing, or why it was not solved ('' when it saves something)."""
    s = r.saving
    if isinstance(s, Saving):
        return why(s)
    return UNFUSIBLE.get(s) or NO_SAVING.get(s, s)


def columns() -> list[Column[SequenceRow, Cut]]:
    """The op first (it shrinks), then the figures and the sequence; what fusing it saves and the sequence are the
    point of the table (pinned: the count and the total give way to a sorted Mean before they do at 80 columns).
    The stack, the mean and the kernel count give way first on a narrow screen."""
    return [
        Column("Op", lambda r, c, w: truncate(r.op, w), priority=KEEP, name=True, min_width=20, tag=number),
        Column("Count", lambda r, c, w: f"{r.count:,}", "count", KEEP),
        Column("Kernels", lambda r, c, w: f"{r.length:,}", "length", 2),
        Column("Total", lambda r, c, w: fmt_time(r.device_ns / 1000), "device", KEEP),
        Column("Mean", lambda r, c, w: fmt_time(r.mean_ns / 1000), "mean", 3),
        Column("Fused saves", lambda r, c, w: saved(r), "saving", PINNED),
        Column("From launches", lambda r, c, w: launches_part(r), "launches", 3),
        Column("Sequence", lambda r, c, w: sequence(r, c), None, PINNED, left=True),
        Column("Stack", lambda r, c, w: stack(r), None, 4, left=True),
    ]


def _saving_us(r: SequenceRow) -> float | None:
    return r.saving_ns / 1000 if r.saving_ns is not None else None


FIELDS: list[Field[SequenceRow]] = [
    Field(
        "op",
        lambda r: r.op,
        "the op, annotation or module whose launches these are (any step: ProfilerStep*; a graph launch)",
    ),
    Field("stack", lambda r: r.stack, "the ops, annotations and modules above it (its first occurrence's)"),
    Field("kernels", lambda r: r.kernels, "the kernels, copies and sets it launched, in launch order"),
    Field("length", lambda r: r.length, "how many activities the sequence has"),
    Field("count", lambda r: r.count, "its occurrences"),
    Field("device_total_us", lambda r: r.device_ns / 1000, "the activities' device time over every occurrence"),
    Field("device_mean_us", lambda r: r.mean_ns / 1000, "the activities' device time per occurrence"),
    Field(
        "cpu_total_us",
        lambda r: r.cpu_ns / 1000,
        "the op's own span over every occurrence (a graph's: its launch calls')",
    ),
    Field("fused_saving_us", _saving_us, "what fusing it saves on the critical path of the window (null: unsolved)"),
    Field(
        "fused_saving_launches_us",
        lambda r: r.launch_saving_ns / 1000 if r.launch_saving_ns is not None else None,
        "of that, what the launch calls fusing takes away buy (CPU time, not in device_total_us): the saving less "
        "its kernels' alone",
    ),
    Field("launch_calls_gone", lambda r: r.calls_gone, "the launch calls fusing takes away in the window"),
    Field(
        "path_us",
        lambda r: r.saving.length_ns / 1000 if isinstance(r.saving, Saving) else None,
        "that critical path as recorded",
    ),
    Field("window", lambda r: r.saving.window if isinstance(r.saving, Saving) else None, "the window solved in"),
    Field("saving_why", saving_words, "why fusing it saves (next to) nothing, or why it was not solved"),
    Field(
        "example_id",
        lambda r: r.occurrences[0],
        "its first occurrence's op (a graph's repeat: its first kernel): an events id",
    ),
]


def _joined(key: str) -> Field[SequenceRow]:
    """A list field as CSV writes it: its items joined by arrows."""
    return Field(key, lambda r: " -> ".join(getattr(r, key)))


CSV_FIELDS = [_joined(f.key) if f.key in ("kernels", "stack") else f for f in FIELDS]


def none_recur(min_length: int, replays: tuple[int, int] = (0, 0)) -> str:
    """Why there are no rows: none recurs, and where graphs replayed kernels, why those are not counted."""
    said = f"No sequence of {min_length} device activities or more recurs in this trace"
    if not replays[1]:
        return said + "."
    return f"{said} outside CUDA graphs: {_replays(replays)}, which no op launched one by one, so none keys a sequence."


def _replays(replays: tuple[int, int]) -> str:
    """'1 graph launch replayed 676 device activities'."""
    launches, activities = replays
    return (
        f"{plural(launches, 'graph launch', 'graph launches')} replayed "
        f"{plural(activities, 'device activity', 'device activities')}"
    )


def replays_note(rows: list[SequenceRow], replays: tuple[int, int]) -> list[str]:
    """Under rows, where graphs replayed kernels: how those are counted."""
    if not replays[1]:
        return []
    if any(r.seq.graph for r in rows):
        return [
            f"{_replays(replays).capitalize()}, which no op launched one by one: a graph launch's row is a run of "
            "kernels repeated back to back in its replay, one occurrence a repeat (no saving solved)."
        ]
    return [f"Not counted: what {_replays(replays)} (no op launched them one by one to key a sequence by)."]


def footers(rows: list[SequenceRow], min_length: int, replays: tuple[int, int] = (0, 0)) -> list[str]:
    if not rows:
        return [none_recur(min_length, replays)]
    windows = {r.saving.window for r in rows if isinstance(r.saving, Saving)}
    note = NOTE.format(window=", ".join(sorted(windows)) or "the typical step")
    return [note, *passes_total(rows), *replays_note(rows, replays)]


def kernels_part(r: SequenceRow) -> str:
    """What its kernels twice as fast add to the saving, in words."""
    part = (r.saving_ns or 0) - r.launches_ns
    return f"its kernels twice as fast the other {when(part)}" if part > 0 else "its kernels twice as fast add nothing"


def launches_part(r: SequenceRow) -> str:
    """The From launches column: the part of the saving the launch calls taken away buy ('-' unsolved)."""
    if r.launch_saving_ns is None:
        return "-"
    return when(r.launch_saving_ns) if r.launch_saving_ns > 0 else "nothing"


def passes_total(rows: list[SequenceRow]) -> list[str]:
    """Under rows whose saving is more than their Total: how much of it the launch calls taken away are."""
    out = []
    for r in rows:
        if r.saving_ns is None or r.saving_ns <= r.device_ns:
            continue
        out.append(
            f"{r.label or r.op} saves {when(r.saving_ns)}, more than its Total ({when(r.device_ns)}): "
            f"{when(r.launches_ns)} of it is the {plural(r.calls_gone, 'launch call')} fusing takes away (CPU time, "
            f"not in Total), and {kernels_part(r)}."
        )
    return out
