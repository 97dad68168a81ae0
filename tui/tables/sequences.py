"""The recurring kernel sequences table (`kernels --sequences`): per root op and the activities it launched, how
often, how long, the stack it comes from, and what fusing it would save on the critical path.

Not an SQL table: its rows depend on --min-length and --top, and each row's saving is a critical-path solve; the
per-op sequences `ops --kernels` lists are SQL's op_kernels.
"""

from __future__ import annotations

from ..model.analyses.explain.findings import Saving
from ..model.analyses.explain.savings import LITTLE
from ..model.analyses.fusion import SequenceRow
from ..text.fmt import fmt_time, truncate
from ..text.names import shorten_names
from .base import KEEP, Column, Field, SortKey
from .critical import when
from .explain_savings import NO_SAVING, why

NAME_WIDTH = 120
OP_WIDTH = 40
KERNEL_WIDTH = 32  # each kernel's name in a sequence, cut in the middle to this
SHOWN = 2  # kernels of a sequence shown in the text table (JSON and CSV: all)
DEFAULT_MIN_LENGTH = 3  # HTA's min_pattern_len
DEFAULT_TOP = 10
SORTS = {  # the viewer's keys (the command ranks by device time, then takes --top)
    "device": SortKey("device_ns", means="device_total"),
    "count": SortKey("count", means="calls"),
    "mean": SortKey("mean_ns", means="device_avg"),
    "saving": SortKey("saving_ns"),
}
NOTE = (
    "A sequence: the kernels, copies and sets an op, annotation or module launched (itself and everything under it "
    "on its thread; a step: all its rank launched while it ran), in launch order, keyed by the op's name (a module "
    "by its class); of ops with the same launches the outermost stands for them. Total: the activities' device time "
    "over every occurrence. "
    "Fused saves: each occurrence in {window} with its kernels twice as fast (explain's rule for fusion: the "
    "intermediates stay on chip) and one launch instead of one per kernel, re-solved on its critical path."
)


def cut_names(rows: list[SequenceRow]) -> dict[str, str]:
    names = sorted({k for r in rows for k in r.kernels})
    return dict(zip(names, shorten_names(names, KERNEL_WIDTH), strict=True))


def sequence(r: SequenceRow, cut: dict[str, str]) -> str:
    text = " → ".join(cut.get(k, k) for k in r.kernels[:SHOWN])
    return text + (f" → … {r.length - SHOWN} more" if r.length > SHOWN else "")


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
    return NO_SAVING.get(s, s)


def columns() -> list[Column[SequenceRow, dict[str, str]]]:
    """The op first (it shrinks), then the figures; the sequence and the stack give way first on a narrow screen."""
    return [
        Column("Op", lambda r, c, w: truncate(r.op, w), priority=KEEP, name=True, min_width=20),
        Column("Count", lambda r, c, w: f"{r.count:,}", "count", KEEP),
        Column("Kernels", lambda r, c, w: f"{r.length:,}", None, 1),
        Column("Total", lambda r, c, w: fmt_time(r.device_ns / 1000), "device", KEEP),
        Column("Mean", lambda r, c, w: fmt_time(r.mean_ns / 1000), "mean", 2),
        Column("Fused saves", lambda r, c, w: saved(r), "saving", KEEP),
        Column("Sequence", lambda r, c, w: sequence(r, c), None, 2, left=True),
        Column("Stack", lambda r, c, w: stack(r), None, 3, left=True),
    ]


def _saving_us(r: SequenceRow) -> float | None:
    return r.saving_ns / 1000 if r.saving_ns is not None else None


FIELDS: list[Field[SequenceRow]] = [
    Field("op", lambda r: r.op, "the op, annotation or module whose launches these are (any step: ProfilerStep*)"),
    Field("stack", lambda r: r.stack, "the ops, annotations and modules above it (its first occurrence's)"),
    Field("kernels", lambda r: r.kernels, "the kernels, copies and sets it launched, in launch order"),
    Field("length", lambda r: r.length, "how many activities the sequence has"),
    Field("count", lambda r: r.count, "its occurrences"),
    Field("device_total_us", lambda r: r.device_ns / 1000, "the activities' device time over every occurrence"),
    Field("device_mean_us", lambda r: r.mean_ns / 1000, "the activities' device time per occurrence"),
    Field("cpu_total_us", lambda r: r.cpu_ns / 1000, "the op's own span over every occurrence"),
    Field("fused_saving_us", _saving_us, "what fusing it saves on the critical path of the window (null: unsolved)"),
    Field(
        "path_us",
        lambda r: r.saving.length_ns / 1000 if isinstance(r.saving, Saving) else None,
        "that critical path as recorded",
    ),
    Field("window", lambda r: r.saving.window if isinstance(r.saving, Saving) else None, "the window solved in"),
    Field("saving_why", saving_words, "why fusing it saves (next to) nothing, or why it was not solved"),
    Field("example_id", lambda r: r.occurrences[0], "its first occurrence's op: an events id"),
]


def _joined(key: str) -> Field[SequenceRow]:
    """A list field as CSV writes it: its items joined by arrows."""
    return Field(key, lambda r: " -> ".join(getattr(r, key)))


CSV_FIELDS = [_joined(f.key) if f.key in ("kernels", "stack") else f for f in FIELDS]


def footers(rows: list[SequenceRow], min_length: int) -> list[str]:
    if not rows:
        return [f"No sequence of {min_length} device activities or more recurs in this trace."]
    windows = {r.saving.window for r in rows if isinstance(r.saving, Saving)}
    return [NOTE.format(window=", ".join(sorted(windows)) or "the typical step")]
