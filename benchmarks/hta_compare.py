"""HTA's analyses and tracetui's side by side on the shared traces, as the markdown tables of benchmarks/HTA.md.

HTA's figures come from tests/data/hta_analyses.json (recorded by tests/hta_analyses.py in a venv with HTA 0.5 and
pandas < 2.2); tracetui's are computed here, from the same files:

    python benchmarks/hta_compare.py [TABLE ...] > /tmp/tables.md   (TABLE: temporal, idle_stats, copies, ...)

Times in ms. "error" is the exception HTA stopped with (its first words).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "traces"
RECORD = ROOT / "tests" / "data" / "hta_analyses.json"


def ms(us: float) -> str:
    return f"{us / 1000:,.2f}"


def pair(hta: float | None, ours: float, scale=ms) -> str:
    """ "12.34 / 12.30" (HTA / tracetui), bold when they differ by more than 0.5%."""
    if hta is None:
        return f"- / {scale(ours)}"
    same = abs(hta - ours) <= 0.005 * max(abs(hta), abs(ours), 1e-9)
    text = f"{scale(hta)} / {scale(ours)}"
    return text if same else f"**{text}**"


def failed(part) -> str | None:
    return part["error"].split(":")[0] if isinstance(part, dict) and "error" in part else None


def results(key: str):
    from tui.model.loading import open_trace

    return open_trace(SHARED / key).results


def temporal(key: str, hta: dict, a) -> list[str]:
    rows = []
    for d in a.breakdown.devices:
        h = hta.get(str(d.rank)) if isinstance(hta, dict) and not failed(hta) else None
        cells = [
            pair(h and h["kernel_time"], d.span_ns / 1000),
            pair(h and h["compute_time"], d.total("compute") / 1000),
            pair(h and h["non_compute_time"], d.non_compute_ns / 1000),
            pair(h and h["idle_time"], d.idle_ns / 1000),
            ms(d.overlap_ns / 1000),
        ]
        note = failed(hta) or ""
        rows.append(f"| {key} | {d.rank} | " + " | ".join(cells) + f" | {note} |")
    return rows


def idle(key: str, hta: dict, a) -> list[str]:
    rows = []
    for i in a.breakdown.idle:
        stream = i.lane.rsplit(" ", 1)[-1]
        h = None if failed(hta) else hta.get(str(i.rank), {}).get(stream)
        h = h or {}
        other = i.cause("stream") + i.cause("other")
        cells = [
            pair(h.get("host_wait", 0.0) if h else None, i.cause("host") / 1000),
            pair(h.get("kernel_wait", 0.0) if h else None, i.cause("kernel") / 1000),
            pair(h.get("other", 0.0) if h else None, other / 1000),
            ms(i.cause("stream") / 1000),
        ]
        rows.append(f"| {key} | {i.rank} | {i.lane} | " + " | ".join(cells) + f" | {failed(hta) or ''} |")
    return rows


def queues(key: str, hta: dict, a) -> list[str]:
    rows = []
    for q in a.queues:
        stream = q.lane.rsplit(" ", 1)[-1]
        h = None if failed(hta) else hta.get(str(q.rank), {}).get(stream)
        plain = lambda v: f"{v:,.2f}"  # noqa: E731
        cells = [
            pair(h and h["mean"], q.mean_per_sample, plain),
            pair(h and h["max"], float(q.max), lambda v: f"{v:,.0f}"),
            plain(q.mean),
            f"{q.p50} / {q.p95}",
        ]
        rows.append(f"| {key} | {q.rank} | {q.lane} | " + " | ".join(cells) + f" | {failed(hta) or ''} |")
    return rows


def launches(key: str, hta: dict, a) -> list[str]:
    import numpy as np

    from tui.model.analyses.queues import launch_stats

    s = launch_stats(a.trace, a.links.launcher)
    rank = np.array([a.trace.tracks[int(t)].rank for t in a.trace.x.track[s.activity]], np.int64)
    rows = []
    for r in sorted(set(rank.tolist())):
        mine = rank == r
        h = None if failed(hta) else hta.get(str(r))
        count = lambda v: f"{v:,.0f}"  # noqa: E731
        cells = [
            pair(h and h["launches"], float(mine.sum()), count),
            pair(h and h["cpu_us"], s.cpu_ns[mine].sum() / 1000),
            pair(h and h["launch_delay_us"], s.hta_delay_ns[mine].sum() / 1000),
            pair(h and h["runtime_outliers"], float((s.cpu_ns[mine] > 50_000).sum()), count),
            pair(h and h["delay_outliers"], float((s.hta_delay_ns[mine] > 100_000).sum()), count),
        ]
        rows.append(f"| {key} | {r} | " + " | ".join(cells) + f" | {failed(hta) or ''} |")
    return rows


def op_kernels(key: str, hta: dict, a) -> list[str]:
    if a.trace.job:
        return []
    h = None if failed(hta) else next(iter(hta.values()), [])
    ours = a.op_kernels
    top = ours[0] if ours else None
    htop = h[0] if h else None
    cells = [
        f"{len(h) if h is not None else '-'} / {len(ours)}",
        f"{htop['op']} ×{htop['count']}" if htop else "-",
        f"{top.op} ×{top.count}" if top else "-",
        f"{htop['op_to_launch_us']:,.1f} / {top.op_to_launch_ns / 1000:,.1f}"
        if htop and top and htop["op"] == top.op
        else "",
    ]
    return [f"| {key} | " + " | ".join(cells) + f" | {failed(hta) or ''} |"]


def bandwidth(key: str, hta: dict, a) -> list[str]:
    if a.trace.job:
        return []
    h = {} if failed(hta) else next(iter(hta.values()), {})
    names = {"H2D": "Memcpy HtoD", "D2H": "Memcpy DtoH", "D2D": "Memcpy DtoD", "set": "Memset"}
    rows = []
    for r in a.copies.rows:
        hb = h.get(names.get(r.kind, ""), {})
        ours = f"{r.gbps:,.2f}" if r.gbps is not None else "-"
        hta_text = f"{hb['mean']:,.2f} (max {hb['max']:,.2f})" if hb else "-"
        rows.append(f"| {key} | {r.kind} | {r.count:,} | {hta_text} | {ours} | {failed(hta) or ''} |")
    return rows


HTA_CAUSE = {"host_wait": ("host",), "kernel_wait": ("kernel",), "other": ("stream", "other")}
HTA_COPY = {"Memcpy HtoD": "H2D", "Memcpy DtoH": "D2H", "Memcpy DtoD": "D2D", "Memcpy PtoP": "P2P", "Memset": "set"}


def idle_stats(key: str, hta: dict, a) -> list[str]:
    """Per stream and HTA cause (its other is other stream and other here): count, mean, std, p50, max in us."""
    import numpy as np

    from tui.model.analyses.breakdown import CAUSES
    from tui.model.analyses.breakdown.intervals import interval_stats

    rows = []
    for i in a.breakdown.idle:
        stream = i.lane.rsplit(" ", 1)[1]
        by = dict(zip(CAUSES, i.intervals, strict=True))
        for kind, causes in HTA_CAUSE.items():
            s = interval_stats(np.asarray([ns for c in causes for ns in by[c]]) / 1000)
            h = (hta.get(str(i.rank), {}).get(stream, {}) if not failed(hta) else {}).get(kind)
            if s is None and not (h and h["count"]):
                continue
            s = s or interval_stats(np.zeros(0))
            us = lambda v: f"{v:,.2f}"  # noqa: E731
            cells = [pair(h and h["count"], s.count if s else 0, lambda v: f"{v:,.0f}")]
            for name, mine in (
                ("mean", s and s.mean_ns),
                ("std", s and s.std_ns),
                ("50%", s and s.p50_ns),
                ("max", s and s.max_ns),
            ):
                theirs = h and h[name]
                theirs = None if theirs is None or theirs != theirs else theirs  # NaN: HTA's std of one interval
                cells.append("- / -" if theirs is None and mine is None else pair(theirs, mine or 0.0, us))
            rows.append(f"| {key} | {i.rank} | {stream} | {kind} | " + " | ".join(cells) + f" | {failed(hta) or ''} |")
    return rows


def kernel_spread(key: str, hta: dict, a) -> list[str]:
    """Per rank file: the kernel names both list, and how many have a std, min or max more than 0.5% apart."""
    from tui.model.analyses.kernels import kernel_rows

    if failed(hta) or a.trace.job or len(hta) != 1:
        return []
    (rank, theirs), ours = next(iter(hta.items())), {r.name: r for r in kernel_rows(a.trace, a.links)}
    both = [n for n in theirs if n in ours]
    apart = sum(1 for n in both if _apart(theirs[n], ours[n]))
    return [f"| {key} | {rank} | {len(theirs)} / {len(ours)} | {len(both)} | {apart} |"]


def _apart(h: dict, r) -> bool:
    """HTA's std (0 for one run), min or max more than 0.5% from tracetui's."""
    pairs = ((h["std"], r.std_us or 0.0), (h["min"], r.min_us), (h["max"], r.max_us))
    return any(abs(a - b) > 0.005 * max(abs(a), abs(b), 1e-9) for a, b in pairs)


def copies_per_rank(key: str, hta: dict, a) -> list[str]:
    """Per rank and direction: count and device time (ms) of the copies and sets, HTA / tracetui."""
    if failed(hta):
        return []
    rows = []
    for r in a.rank_rows:
        theirs = {HTA_COPY.get(k, k): v for k, v in hta.get(str(r.rank), {}).items()}
        for c in r.copies:
            h = theirs.get(c.kind)
            cells = [pair(h and h["count"], c.count, lambda v: f"{v:,.0f}"), pair(h and h["us"], c.ns / 1000)]
            rows.append(f"| {key} | {r.rank} | {c.kind} | " + " | ".join(cells) + " |")
    return rows


TABLES = [
    (
        "temporal",
        "Temporal breakdown (`get_temporal_breakdown` / `tracetui breakdown`), ms, HTA / tracetui",
        "| trace | rank | span | compute (overlaps in) | non-compute | idle | overlap (tracetui) | HTA |",
        temporal,
    ),
    (
        "idle",
        "Idle time per stream (`get_idle_time_breakdown` / `breakdown`'s second table), ms, HTA / tracetui",
        "| trace | rank | stream | host wait | between kernels | other (+ other stream) | of it, other stream | HTA |",
        idle,
    ),
    (
        "queues",
        "Launch queue per stream (`get_queue_length_summary` / `kernels --queues`), HTA / tracetui",
        "| trace | rank | stream | mean per sample | max | time-weighted mean | p50 / p95 | HTA |",
        queues,
    ),
    (
        "launches",
        "Launch stats per rank (`get_cuda_kernel_launch_stats` / SQL `launch_stats`), HTA / tracetui",
        "| trace | rank | launches | CPU ms | launch delay ms | calls > 50 us | starts > 100 us | HTA |",
        launches,
    ),
    (
        "op_kernels",
        "Kernel sequences per op (`get_aten_op_kernels_and_delay` / `ops --kernels`)",
        "| trace | sequences HTA / tracetui | HTA's most frequent | tracetui's | its op→launch us | HTA |",
        op_kernels,
    ),
    (
        "bandwidth",
        "Copies per direction (`get_memory_bw_summary` / `summary`), GB/s",
        "| trace | direction | copies | HTA: mean of its samples | tracetui: bytes / time | HTA |",
        bandwidth,
    ),
    (
        "idle_stats",
        "Idle intervals per stream and cause (`show_idle_interval_stats` / `breakdown --idle-stats`), us, HTA / tracetui",
        "| trace | rank | stream | HTA's cause | count | mean | std | p50 | max | HTA |",
        idle_stats,
    ),
    (
        "kernel_spread",
        "Spread per kernel (`get_gpu_kernel_breakdown` / `kernels`' std_us, min_us, max_us)",
        "| trace | rank | names HTA / tracetui | in both | of them, std, min or max over 0.5% apart |",
        kernel_spread,
    ),
    (
        "copies",
        "Copies per rank (HTA's memory kernels per rank / `ranks`' copies), count and ms, HTA / tracetui",
        "| trace | rank | direction | count | time |",
        copies_per_rank,
    ),
]


def main(only: list[str]) -> None:
    record = json.loads(RECORD.read_text())
    out = [f"HTA {record['hta']}; figures recorded by tests/hta_analyses.py.", ""]
    traces = {k: v for k, v in record["traces"].items() if (SHARED / k).exists()}
    tables = [t for t in TABLES if not only or t[0] in only]
    if only:  # the traces HTA's record has these analyses for
        traces = {k: v for k, v in traces.items() if "error" in v or any(t[0] in v for t in tables)}
    loaded = {}
    for key, found in traces.items():
        if "error" in found:
            continue
        try:
            loaded[key] = results(key)
        except Exception as exc:  # noqa: BLE001 - a trace tracetui refuses is said in the table
            print(f"{key}: {exc}", file=sys.stderr)
    for name, title, head, rows in tables:
        out += [f"### {title}", "", head, "|" + "---|" * (head.count("|") - 1)]
        for key, a in loaded.items():
            out += rows(key, traces[key].get(name, {}), a)
        out.append("")
    failures = {k: v["error"] for k, v in traces.items() if "error" in v}
    if failures:
        out += ["HTA could not load: " + "; ".join(f"{k} ({v.split(':')[0]})" for k, v in failures.items()), ""]
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
