"""`tracetui diff A B` on two snapshots: per device the figures side by side, then what grew by frame."""

from __future__ import annotations

from ..model.snapshot.diff import SnapshotDiff
from ..tables import snapshot_diff as D
from .formats import grid, table, terminal_width, titled, to_json, wrap


def render_snapshot_diff(d: SnapshotDiff, fmt: str, limit: int) -> str:
    if fmt == "json":
        return to_json(D.document(d, limit))
    width = terminal_width()
    parts = [f"A: {d.a_path}\nB: {d.b_path}"]
    for dev in d.devices:
        parts.append(grid(fmt, [dev.name, "A", "B", "Change"], D.figure_rows(dev), [], width))
        for title, rows in (
            (f"{dev.name}: alive at each peak, by frame, by size of change", dev.at_peak),
            (f"{dev.name}: alive when each snapshot was taken, by frame, by size of change", dev.at_end),
        ):
            shown = [r for r in rows if r.delta][: limit if limit > 0 else None]
            if shown:
                parts.append(titled(fmt, title, table(fmt, D.CHANGE_COLUMNS, shown, None, D.NAME_WIDTH, [], width)))
    parts.append("\n".join(wrap([D.MATCH_RULE], width if fmt == "text" else None)))
    return "\n\n".join(parts)
