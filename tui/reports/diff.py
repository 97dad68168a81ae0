"""`tracetui diff A B`: the comparison as text, markdown or JSON."""

from __future__ import annotations

from ..model.analyses.diff import Diff
from ..tables import diff as D
from ..tables import summary as S
from .formats import grid, table, terminal_width, to_json, wrap, written_doc


@written_doc
def diff_document(d: Diff, limit: int, labels: tuple[str, str]) -> dict:
    """What `tracetui diff --format json` prints, as data."""
    ops, kernels = (d.ops if limit <= 0 else d.ops[:limit]), (d.kernels if limit <= 0 else d.kernels[:limit])
    return {
        "a": labels[0],
        "b": labels[1],
        "matching": D.MATCH_RULE,
        "slower_pct": d.slower_pct,
        "step_time_a_us": d.step_time_a,
        "step_time_b_us": d.step_time_b,
        "spread_pct": None if d.spread is None else 100 * d.spread,  # the runs' own: the larger of A's and B's
        "within_spread": d.within_spread,  # the change is no larger than it: noise, not claimed
        "cpu_only": d.cpu_only,
        "launches_saved": D.launches_saved(d.summary_a, d.summary_b),
        "summary": D.summary_fields(d.summary_a, d.summary_b),
        "steps": [
            {"a": S.step_fields(sa) if sa else None, "b": S.step_fields(sb) if sb else None}
            for sa, sb in D.zip_steps(d.steps_a, d.steps_b)
        ],
        "ops": [D.row_fields(r) for r in ops],
        "kernels": [D.row_fields(r) for r in kernels],
    }


def render_diff(d: Diff, fmt: str, limit: int, labels: tuple[str, str]) -> str:
    if fmt == "json":
        return to_json(diff_document(d, limit, labels))
    ops, kernels = (d.ops if limit <= 0 else d.ops[:limit]), (d.kernels if limit <= 0 else d.kernels[:limit])
    width = terminal_width()
    head = D.head_lines(d, labels)
    pairs = D.step_pairs(d.steps_a, d.steps_b)
    parts = [
        "\n".join(wrap(head, width, "   ")),
        grid(fmt, D.SUMMARY_HEADS, D.summary_rows(d.summary_a, d.summary_b), [], width),
        table(fmt, D.step_columns(not d.cpu_only, pairs), pairs, None, 0, [], width)
        if d.steps_a or d.steps_b
        else "No ProfilerStep#N in either trace.",
        "Ops (self CPU time), by size of change",
        table(fmt, D.ROW_COLUMNS, ops, None, D.NAME_WIDTH, [], width),
    ]
    if d.cpu_only:
        return "\n\n".join([*parts, "\n".join(D.no_gpu_lines(d))])
    parts += [
        "GPU kernels (total time), by size of change",
        table(fmt, D.ROW_COLUMNS, kernels, None, D.NAME_WIDTH, [D.MATCH_RULE], width),
    ]
    return "\n\n".join(parts)
