"""The segment view of a snapshot: each segment the allocator held as a bar of its blocks, used and free.

It shows the memory at the timeline's cursor (memory_viz's Allocator State History): the snapshot's own
blocks at the end, rebuilt from the history at an earlier entry (model/snapshot/state.py), in a worker.
A used block is coloured by the frame that allocated it (the selected allocation white), a free one is
dots: a segment with many dots between colours is fragmented.
"""

from __future__ import annotations

import numpy as np
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ..model.snapshot.columns import Snapshot
from ..model.snapshot.frames import Namer
from ..model.snapshot.report import DeviceMemory, label_of
from ..model.snapshot.state import END, FREE, State, state_at
from ..tables.snapshot import stream_name
from ..text.fmt import fmt_memory, fmt_memory_gutter
from .failures import ReportsFailedWorkers
from .paint import SELECTED, style
from .snapshot_timeline import frame_color

HEAD = 2  # the moment's line and the columns' header
NARROW = 100  # below this many columns, the segment's columns are cut short
SIZE = 7  # the most characters a size takes as fmt_memory_gutter writes it (97.9MiB, 1.33GiB)
FREE_FG = Color.parse("#4b5563")
UNKNOWN = Color.parse("#6b7280")
BACKGROUND = Color.parse("#1c1f24")
PICKED = Color.parse("#2d3440")
TEXT = Style(color="#c8ccd4")
DIM = Style(color="#9aa3ad")


class SnapshotSegments(ReportsFailedWorkers, Widget, can_focus=True):
    """Attributes down (the moment, the selected allocation); messages up (the selected segment)."""

    HELP_NAME = "Segments"
    DEFAULT_CSS = "SnapshotSegments { height: 1fr; }"
    BINDINGS = [
        Binding("up,k", "move(-1)", "Previous segment", id="segments.up"),
        Binding("down,j", "move(1)", "Next segment", id="segments.down"),
        Binding("pageup", "move(-10)", "Up a page", show=False, id="segments.page_up"),
        Binding("pagedown", "move(10)", "Down a page", show=False, id="segments.page_down"),
        Binding("e", "end", "At the end", id="segments.end"),
    ]

    class Picked(Message):
        """A segment was picked (its row in the state shown)."""

        def __init__(self, state: State, segment: int) -> None:
            super().__init__()
            self.state, self.segment = state, segment

    def __init__(self, snap: Snapshot, mem: DeviceMemory, namer: Namer, **kwargs) -> None:
        super().__init__(**kwargs)
        self.snap, self.mem, self.namer = snap, mem, namer
        self.entry = END  # the moment shown: END, or an entry of the history
        self.wanted = END
        self.state: State | None = None
        self.row = 0  # the picked segment
        self.top = 0  # the first segment shown
        self.selected = -1  # an allocation to draw white
        self.times = snap.histories[mem.device].time_ns if mem.device in snap.histories else np.zeros(0, np.int64)

    def on_mount(self) -> None:
        self.show_at(END)

    def show_at(self, entry: int) -> None:
        """Show the memory after an entry (END: when the snapshot was taken); rebuilt in a worker."""
        self.wanted = entry
        if self.state is None or entry != self.entry:
            self.rebuild(entry)

    @work(
        thread=True,
        exclusive=True,
        group="snapshot-segments",
        description="Rebuilding the segments",
        exit_on_error=False,
    )
    def rebuild(self, entry: int) -> None:
        st = state_at(self.snap, self.mem.device, self.mem.allocs, self.mem.spans, entry)
        self.app.call_from_thread(self._shown, entry, st)

    def _shown(self, entry: int, st: State) -> None:
        if entry != self.wanted:  # a worker that was overtaken: a newer moment is being rebuilt
            return
        self.entry, self.state = entry, st
        self.row = min(self.row, max(len(st.seg_addr) - 1, 0))
        self.refresh()
        self._post()

    def _post(self) -> None:
        if self.state is not None and len(self.state.seg_addr):
            self.post_message(self.Picked(self.state, self.row))

    # ---- drawing -------------------------------------------------------------------------------

    @property
    def rows_shown(self) -> int:
        return max(self.size.height - HEAD, 1)

    def moment(self) -> str:
        if self.entry == END:
            return "at the end (when the snapshot was taken)"
        if self.entry < 0:
            return "before the history"
        from ..text.fmt import fmt_dur

        return (
            f"at {fmt_dur(self.times[self.entry] - self.times[0])} (entry {self.entry + 1:,}), rebuilt from the history"
        )

    def head(self) -> str:
        st = self.state
        if st is None:
            return " computing…"
        free = st.free
        used = int(st.blk_size[~free].sum())
        stale = " · computing…" if self.wanted != self.entry else ""
        return (
            f" {self.moment()}: {len(st.seg_addr):,} segments, {fmt_memory(int(st.seg_size.sum()))} reserved, "
            f"{fmt_memory(used)} used, {fmt_memory(int(st.blk_size[free].sum()))} free in {int(free.sum()):,} "
            f"blocks (largest {fmt_memory(st.largest_free())}){stale}"
        )

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            return Strip([Segment(self.head()[:width].ljust(width), DIM)], width)
        if y == 1:
            if self.narrow:
                cols = f" {'Segment':<9} {'Size':>{SIZE}}   {'Free':>{SIZE}} {'Max':>{SIZE}}│"
            else:
                cols = f" {'Segment':<14} {'Size':>{SIZE}} {'Stream':<11}{'Pool':<6}"
                cols += f"{'Free':>{SIZE}} {'Largest':>{SIZE}}│"
            return Strip([Segment((cols + " blocks: used by colour, free ·")[:width].ljust(width), DIM)], width)
        st = self.state
        k = self.top + y - HEAD
        if st is None or k >= len(st.seg_addr):
            return Strip.blank(width)
        return Strip(self._segment_line(st, k, width), width)

    @property
    def narrow(self) -> bool:
        return self.size.width < NARROW

    def _segment_line(self, st: State, k: int, width: int) -> list[Segment]:
        mine = st.blocks_of(k)
        free = mine[st.free[mine]]
        largest = int(st.blk_size[free].max()) if len(free) else 0
        size, free_b, most = (fmt_memory_gutter(n) for n in (st.seg_size[k], st.blk_size[free].sum(), largest))
        if self.narrow:  # the address's last digits, the pool as a letter, no stream
            pool = "S" if st.seg_small[k] else "L"
            text = f" …{int(st.seg_addr[k]) & 0xFFFFFFFF:08x} {size:>{SIZE}} {pool} {free_b:>{SIZE}} {most:>{SIZE}}│"
        else:
            text = (
                f" {st.seg_addr[k]:#014x} {size:>{SIZE}} {stream_name(int(st.seg_stream[k]))[:10]:<11}"
                f"{'small' if st.seg_small[k] else 'large':<6}{free_b:>{SIZE}} {most:>{SIZE}}│"
            )
        bar_w = max(width - len(text), 1)
        picked = k == self.row and self.has_focus
        out = [Segment(text, style(None, PICKED) + TEXT if picked else TEXT)]
        return out + self._bar(st, mine, int(st.seg_addr[k]), int(st.seg_size[k]), bar_w)

    def _bar(self, st: State, blocks: np.ndarray, start: int, size: int, width: int) -> list[Segment]:
        """The segment's bytes in width cells, each the block covering its middle."""
        mids = start + (np.arange(width) + 0.5) * size / width
        ends = st.blk_addr[blocks] + st.blk_size[blocks]
        k = np.minimum(np.searchsorted(ends, mids, side="right"), len(blocks) - 1)
        parts: list[Segment] = []
        for b in blocks[k].tolist():
            alloc = int(st.blk_alloc[b])
            if alloc == FREE:
                parts.append(Segment("·", style(FREE_FG, BACKGROUND)))
            else:
                parts.append(Segment(" ", style(None, self._color(alloc))))
        return list(Segment.simplify(parts))

    def _color(self, alloc: int) -> Color:
        if alloc < 0:
            return UNKNOWN
        if alloc == self.selected:
            return SELECTED
        return frame_color(label_of(self.mem.allocs, alloc, self.namer))

    # ---- actions ----------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if self.state is None or not len(self.state.seg_addr):
            return
        self.row = min(max(self.row + step, 0), len(self.state.seg_addr) - 1)
        if self.row < self.top:
            self.top = self.row
        elif self.row >= self.top + self.rows_shown:
            self.top = self.row - self.rows_shown + 1
        self.refresh()
        self._post()

    def action_end(self) -> None:
        self.show_at(END)

    def on_click(self, event: events.Click) -> None:
        if event.y >= HEAD:
            self.action_move(self.top + event.y - HEAD - self.row)

    def on_focus(self) -> None:
        self.refresh()
        self._post()

    def on_blur(self) -> None:
        self.refresh()
