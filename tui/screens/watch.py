"""`tracetui watch DIR`: a strip of the folder's captures (steps, typical step, verdict), the shown one's summary.

The folder is polled in a worker thread (tui/model/watch.py says when a file is complete); each new
capture is added to the strip, and highlighted and shown while the newest was (one the user went up to stays
highlighted, its panel shown). `d` diffs the highlighted capture against the one before it, `o` opens it in the
full viewer over the strip; Esc or q there comes back to the strip, which kept following the folder meanwhile.
q on the strip quits.
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ..appkit import pace
from ..model.errors import TraceError
from ..model.watch import CaptureRow, Watcher, change, summarize
from ..tables import diff as D
from ..tables import summary as S
from ..tables.summary import pct
from ..text.fmt import fmt_time
from ..widgets.failures import ReportsFailedWorkers
from ..widgets.keybar import KeyBar

STRIP_HEADS = ("Capture", "Steps", "Typical step", "vs previous", "Verdict")
WAITING = "each *.pt.trace.json tensorboard_trace_handler writes is shown once complete"


def change_cell(rows: list[CaptureRow], k: int) -> str:
    """The typical step's change against the capture before it ('' for the first); one within the runs' own spread
    reads as no change."""
    c = change(rows[k - 1], rows[k]) if k > 0 else None
    if c is None:
        return ""
    return f"no change ({c.pct:+.1f}%, spread ±{pct(c.spread or 0.0)})" if c.noise else f"{c.pct:+.1f}%"


def grid(heads: list[str], rows: list[list[str]]) -> str:
    """Rows as aligned plain text under their heads."""
    widths = [max(len(str(c)) for c in col) for col in zip(heads, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [heads, *rows]]
    return "\n".join(lines)


class WatchScreen(ReportsFailedWorkers, Screen):
    HELP_NAME = "Watching a folder"
    BINDINGS = [
        Binding("o", "open", "Open in the viewer", id="watch.open"),
        Binding("d", "diff", "Diff vs previous", id="watch.diff"),
    ]

    def __init__(self, folder: Path, use_cache: bool, interval: float) -> None:
        super().__init__()
        self.folder, self.use_cache, self.interval = folder, use_cache, interval
        self.watcher = Watcher(folder)
        self.polling = threading.Lock()  # one poll at a time: a slow load must not let the next poll see the file too
        self.rows: list[CaptureRow] = []
        self.paths: list[Path] = []
        self.notes: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(f"Watching {self.folder} …", id="watch-title", markup=False)
        yield DataTable(id="watch-strip", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="watch-body"):
            yield Static("", id="watch-shown", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*STRIP_HEADS)
        self.set_focus(self.query_one(DataTable))
        self.poll()
        self.set_interval(self.interval, self.poll)

    def on_screen_resume(self) -> None:
        """Back from the viewer: the strip, focused, with what arrived meanwhile."""
        self.set_focus(self.query_one(DataTable))

    @work(thread=True, group="watch-poll", exit_on_error=False)
    def poll(self) -> None:
        """Look at the folder; summarize each new complete capture (a bad one is skipped with a note)."""
        if not self.polling.acquire(blocking=False):
            return
        try:
            self._poll()
        finally:
            self.polling.release()

    def _poll(self) -> None:
        try:
            ready, notes = self.watcher.poll()
        except TraceError as exc:
            pace.call_from(self.app, self._note, [str(exc)])
            return
        for f in ready:
            try:
                row = summarize(f, self.use_cache)
            except TraceError as exc:
                self.watcher.mark_bad(f)
                notes.append(f"{f.name} skipped: {exc.problem}")
                continue
            pace.call_from(self.app, self._add, f, row)
        if notes:
            pace.call_from(self.app, self._note, notes)
        elif not ready and not self.rows:
            self.app.call_from_thread(self._title)  # an empty folder: say it is waited on

    def _add(self, path: Path, row: CaptureRow) -> None:
        self.rows.append(row)
        self.paths.append(path)
        k = len(self.rows) - 1
        verdict = row.verdict or "-"
        strip = self.query_one(DataTable)
        following = strip.cursor_row >= k - 1  # on the newest row (or none yet): follow the folder
        strip.add_row(row.file, str(row.steps), fmt_time(row.step_us), change_cell(self.rows, k), verdict)
        if following:  # a user who went up to an older capture stays on it: its panel, d and o act on it
            strip.move_cursor(row=k)
        self.notes = [n for n in self.notes if not n.startswith(row.file)]  # no longer being written
        self._title()

    def _note(self, notes: list[str]) -> None:
        self.notes = (self.notes + notes)[-3:]
        self._title()

    def _title(self) -> str:
        text = f"Watching {self.folder}: " + (
            f"{len(self.rows)} capture{'s' * (len(self.rows) != 1)}"
            if self.rows
            else f"no captures yet; waiting for the first ({WAITING})"
        )
        text += "".join(f"\nnote: {n}" for n in self.notes)
        self.query_one("#watch-title", Static).update(text)
        return text

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show(event.cursor_row)

    def shown(self) -> int:
        return self.query_one(DataTable).cursor_row

    @work(thread=True, exclusive=True, group="watch-show", exit_on_error=False)
    def show(self, k: int) -> None:
        """The capture's summary lines, its verdict and steps."""
        from ..model.loading import open_trace

        if not 0 <= k < len(self.paths):
            return
        try:
            s = open_trace(self.paths[k], cache=self.use_cache).results.summary
        except TraceError as exc:
            pace.call_from(self.app, self._body, str(exc), k)
            return
        rows = [[label, text] for key, label, text in S.lines(s) if key != "verdict"] + [["Verdict", s.verdict]]
        steps = [[st.name, fmt_time(st.dur_us)] for st in S.shown_steps(s.steps)[0]]
        text = f"{self.paths[k].name}\n\n{grid(['Summary', ''], rows)}\nWhy: {s.reason}\n{S.typical_note(s.typical)}"
        pace.call_from(self.app, self._body, text + ("\n\n" + grid(["Step", "Duration"], steps) if steps else ""), k)

    def _body(self, text: str, k: int) -> None:
        """The panel, for capture k: dropped when the highlight has moved on meanwhile (a thread worker is not
        stopped by the next one, and a slow load's panel landed over the one the user had moved to)."""
        if k == self.shown():
            self.query_one("#watch-shown", Static).update(text)

    def action_diff(self) -> None:
        k = self.shown()
        if k <= 0 or k >= len(self.paths):
            self.notify("d compares a capture with the one before it: pick a later capture", severity="warning")
            return
        self.diff(self.paths[k - 1], self.paths[k], k)

    @work(thread=True, exclusive=True, group="watch-show", exit_on_error=False)
    def diff(self, a: Path, b: Path, k: int) -> None:
        from ..model.analyses.diff import diff
        from ..model.loading import open_trace

        d = diff(*(open_trace(p, cache=self.use_cache).results for p in (a, b)))
        head = "\n".join(D.head_lines(d, (a.name, b.name)))
        body = grid(D.SUMMARY_HEADS, D.summary_rows(d.summary_a, d.summary_b))
        ops = grid(D.ROW_HEADS, [D.row_cells(r, 60) for r in d.ops[:15]])
        pace.call_from(self.app, self._body, f"{head}\n\n{body}\n\nOps that changed most\n{ops}", k)

    def action_open(self) -> None:
        k = self.shown()
        if 0 <= k < len(self.paths):
            self.app.open_capture(self.paths[k])  # type: ignore[attr-defined]  # over the strip (TraceApp)
        else:
            self.notify("o opens the shown capture: there is none yet", severity="warning", timeout=3)
