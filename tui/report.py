"""Headless reports: summary, ops and kernels as text (rich), csv, json or markdown."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .fmt import fmt_memory, fmt_share, fmt_time, truncate
from .model.analyses import readings as R
from .model.analyses.kernels import KernelRow
from .model.analyses.ops import OpRow, OpsTable
from .model.analyses.results import Results
from .model.analyses.summary import Summary

NAME_WIDTH = 55


@dataclass(frozen=True)
class SortKey:
    attr: str
    reverse: bool = True


OP_SORTS = {
    "self_cpu": SortKey("self_cpu_us"),
    "cpu_total": SortKey("cpu_total_us"),
    "cpu_avg": SortKey("cpu_avg_us"),
    "self_device": SortKey("self_device_us"),
    "device_total": SortKey("device_total_us"),
    "device_avg": SortKey("device_avg_us"),
    "count": SortKey("count"),
    "name": SortKey("name", False),
}
# torch's sort_by spellings, and cuda/gpu for device.
OP_ALIASES = {
    "self_cpu_time_total": "self_cpu",
    "cpu_time_total": "cpu_total",
    "cpu_time": "cpu_avg",
    "self_cuda_time_total": "self_device",
    "cuda_time_total": "device_total",
    "cuda_time": "device_avg",
    "self_device_time_total": "self_device",
    "device_time_total": "device_total",
    "device_time": "device_avg",
    "self_cuda": "self_device",
    "cuda_total": "device_total",
    "self_gpu": "self_device",
    "gpu_total": "device_total",
    "calls": "count",
}
KERNEL_SORTS = {
    "total": SortKey("total_us"),
    "count": SortKey("count"),
    "avg": SortKey("avg_us"),
    "min": SortKey("min_us"),
    "max": SortKey("max_us"),
    "latency": SortKey("launch_latency_us"),
    "name": SortKey("name", False),
}


def resolve_op_sort(key: str | None, table: OpsTable) -> str:
    if key is None:
        return "device_total" if table.has_device else "cpu_total"
    key = OP_ALIASES.get(key, key)
    if key not in OP_SORTS:
        raise ValueError(f"unknown sort key {key!r}; choose from {', '.join(OP_SORTS)}")
    return key


def sort_rows(rows: Sequence, sorts: dict[str, SortKey], key: str) -> list:
    spec = sorts[key]
    return sorted(rows, key=lambda r: (getattr(r, spec.attr) is None, _sortable(getattr(r, spec.attr), spec.reverse)))


def _sortable(value, reverse: bool):
    if value is None:
        return 0
    return -value if reverse and not isinstance(value, str) else value


def limit(rows: list, n: int) -> list:
    return rows if n <= 0 else rows[:n]


# ---- ops ---------------------------------------------------------------------------------


def op_json(r: OpRow, grouped: bool, memory: bool = False) -> dict:
    out = {
        "name": r.name,
        "count": r.count,
        "self_cpu_us": r.self_cpu_us,
        "cpu_total_us": r.cpu_total_us,
        "self_device_us": r.self_device_us,
        "device_total_us": r.device_total_us,
        "kind": "device" if r.is_device else "host",
    }
    if memory:
        out |= {
            "cpu_memory_bytes": r.cpu_mem,
            "self_cpu_memory_bytes": r.self_cpu_mem,
            "device_memory_bytes": r.device_mem,
            "self_device_memory_bytes": r.self_device_mem,
        }
    if grouped:
        out["input_shapes"] = r.input_shapes
    return out


def op_cells(r: OpRow, t: OpsTable, grouped: bool) -> list[str]:
    cells = [
        truncate(r.name, NAME_WIDTH),
        fmt_share(r.self_cpu_us, t.self_cpu_total_us),
        fmt_time(r.self_cpu_us),
        fmt_share(r.cpu_total_us, t.self_cpu_total_us),
        fmt_time(r.cpu_total_us),
        fmt_time(r.cpu_avg_us),
    ]
    if t.has_device:
        cells += [
            fmt_time(r.self_device_us),
            fmt_share(r.self_device_us, t.self_device_total_us),
            fmt_time(r.device_total_us),
            fmt_time(r.device_avg_us),
        ]
    if t.has_memory:
        cells += [fmt_memory(r.cpu_mem), fmt_memory(r.self_cpu_mem)]
        if t.has_device_memory:
            cells += [fmt_memory(r.device_mem), fmt_memory(r.self_device_mem)]
    cells.append(str(r.count))
    if grouped:
        cells.append(r.input_shapes or "")
    return cells


def op_headers(t: OpsTable, grouped: bool) -> list[str]:
    heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if t.has_device:
        heads += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if t.has_memory:
        heads += ["CPU Mem", "Self CPU Mem"] + (["CUDA Mem", "Self CUDA Mem"] if t.has_device_memory else [])
    heads.append("# of Calls")
    return heads + (["Input Shapes"] if grouped else [])


def op_footers(t: OpsTable) -> list[str]:
    lines = [f"Self CPU time total: {fmt_time(t.self_cpu_total_us)}"]
    if t.has_device:
        lines.append(f"Self CUDA time total: {fmt_time(t.self_device_total_us)}")
    if t.device_link != "External id":
        lines.append("(CUDA time per op via the launching call: this trace's GPU events do not name their op)")
    return lines


def render_ops(a: Results, fmt: str, sort: str | None, n: int, grouped: bool) -> str:
    table = a.ops_by_shape if grouped else a.ops
    rows = limit(sort_rows(table.rows, OP_SORTS, resolve_op_sort(sort, table)), n)
    if fmt == "json":
        return _json(
            {
                "rows": [op_json(r, grouped, table.has_memory) for r in rows],
                "self_cpu_total_us": table.self_cpu_total_us,
                "self_device_total_us": table.self_device_total_us,
            }
        )
    heads = op_headers(table, grouped)
    cells = [op_cells(r, table, grouped) for r in rows]
    if fmt == "csv":
        return _csv(
            heads,
            [[str(v) for v in op_json(r, grouped, table.has_memory).values()] for r in rows],
            list(op_json(rows[0], grouped, table.has_memory)) if rows else heads,
        )
    return _grid(fmt, heads, cells, op_footers(table))


# ---- kernels -----------------------------------------------------------------------------


def kernel_json(r: KernelRow) -> dict:
    return {
        "name": r.name,
        "kind": r.kind,
        "count": r.count,
        "total_us": r.total_us,
        "avg_us": r.avg_us,
        "min_us": r.min_us,
        "max_us": r.max_us,
        "pct_gpu": r.pct_gpu,
        "launch_latency_us": r.launch_latency_us,
    }


KERNEL_HEADS = ["Name", "Kind", "# of Calls", "Total", "Avg", "Min", "Max", "% GPU time", "Launch→start avg"]


def kernel_cells(r: KernelRow) -> list[str]:
    lat = "-" if r.launch_latency_us is None else fmt_time(r.launch_latency_us)
    return [
        truncate(r.name, NAME_WIDTH * 2),
        r.kind,
        str(r.count),
        fmt_time(r.total_us),
        fmt_time(r.avg_us),
        fmt_time(r.min_us),
        fmt_time(r.max_us),
        f"{r.pct_gpu:.2f}%",
        lat,
    ]


def render_kernels(a: Results, fmt: str, sort: str | None, n: int) -> str:
    key = sort or "total"
    if key not in KERNEL_SORTS:
        raise ValueError(f"unknown sort key {key!r}; choose from {', '.join(KERNEL_SORTS)}")
    rows = limit(sort_rows(a.kernels, KERNEL_SORTS, key), n)
    if fmt == "json":
        return _json({"rows": [kernel_json(r) for r in rows], "gpu_time_us": sum(r.total_us for r in a.kernels)})
    if fmt == "csv":
        return _csv(
            KERNEL_HEADS,
            [[str(v) for v in kernel_json(r).values()] for r in rows],
            list(kernel_json(rows[0])) if rows else KERNEL_HEADS,
        )
    total = sum(r.total_us for r in a.kernels)
    footer = (
        [f"GPU activity total: {fmt_time(total)} in {sum(r.count for r in a.kernels):,} calls"]
        if a.kernels
        else ["No GPU activity in this trace."]
    )
    return _grid(fmt, KERNEL_HEADS, [kernel_cells(r) for r in rows], footer)


# ---- summary -----------------------------------------------------------------------------


def summary_json(s: Summary) -> dict:
    return {
        "wall_us": s.wall_us,
        "gpu_busy_us": s.gpu_busy_us,
        "gpu_utilization": s.gpu_utilization,
        "cpu_launch_us": s.cpu_launch_us,
        "device_self_total_us": s.device_self_total_us,
        "cpu_self_total_us": s.cpu_self_total_us,
        "verdict": s.verdict,
        "reason": s.reason,
        "cpu_only": s.cpu_only,
        "launches": s.launches,
        "kernels": s.kernels,
        "gpus": s.gpus,
        "steps": [{"name": st.name, "dur_us": st.dur_us} for st in s.steps],
    }


def summary_lines(s: Summary) -> list[tuple[str, str]]:
    rows = [(R.WALL, fmt_time(s.wall_us))]
    if not s.cpu_only:
        gpus = f", {s.gpus} GPUs)" if s.gpus > 1 else ")"
        rows += [
            (R.BUSY, f"{fmt_time(s.gpu_busy_us)} ({s.gpu_utilization:.1%} of the window{gpus}"),
            (R.IDLE, fmt_time(max(s.wall_us * max(s.gpus, 1) - s.gpu_busy_us, 0))),
            (R.LAUNCH, f"{fmt_time(s.cpu_launch_us)} in {s.launches:,} calls"),
            (R.KERNELS, f"{s.kernels:,} averaging {fmt_time(s.avg_kernel_us)}"),
        ]
    rows += [(R.SELF_CPU, fmt_time(s.cpu_self_total_us))]
    if not s.cpu_only:
        rows.append((R.SELF_CUDA, fmt_time(s.device_self_total_us)))
    rows.append(("Verdict", f"{s.verdict}: {s.reason}"))
    return rows


def render_summary(a: Results, fmt: str) -> str:
    s = a.summary
    if fmt == "json":
        return _json(summary_json(s))
    rows = [[k, v] for k, v in summary_lines(s)]
    steps = [[st.name, fmt_time(st.dur_us)] for st in s.steps]
    out = _grid(fmt, ["Summary", ""], rows, [])
    if steps:
        out += "\n" + _grid(fmt, ["Step", "Duration"], steps, [])
    return out


# ---- explain -----------------------------------------------------------------------------


def render_explain(a: Results, fmt: str) -> str:
    findings = a.findings
    if fmt == "json":
        return _json(
            {
                "findings": [
                    {
                        "rule": f.rule,
                        "title": f.title,
                        "note": f.note,
                        "count": f.count,
                        "examples": [a.trace.name_of(e) for e in f.events[:3]],
                    }
                    for f in findings
                ]
            }
        )
    rows = [[f.title, str(f.count) if f.events else "-", f.note] for f in findings]
    if not rows:
        return "No explain rule fired on this trace."
    if fmt == "md":
        return _grid("md", ["Pattern", "Events", "What it means"], rows, [])
    out = []
    for f in findings:
        example = f" e.g. {a.trace.name_of(f.events[0])[:70]}" if f.events else ""
        count = f"{f.count:,} event{'s' if f.count != 1 else ''}"
        out.append(f"* {f.title} ({count}{example})\n  {f.note}" if f.events else f"* {f.title}\n  {f.note}")
    return "\n".join(out)


# ---- shared ------------------------------------------------------------------------------


def _json(doc: dict) -> str:
    return json.dumps(doc, indent=2)


def _csv(_heads: list[str], rows: list[list[str]], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fields)
    w.writerows(rows)
    return buf.getvalue().rstrip("\n")


def _grid(fmt: str, heads: list[str], rows: list[list[str]], footers: list[str]) -> str:
    if fmt == "md":
        lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(["---"] + ["---:"] * (len(heads) - 1)) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines + ([""] + footers if footers else []))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for k, h in enumerate(heads):
        table.add_column(h, justify="left" if k == 0 else "right", no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(Text(c) for c in row))  # Text: names like "[memory]" are not markup
    return _to_text(table) + ("\n" + "\n".join(footers) if footers else "")


def _to_text(renderable: Table) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None, legacy_windows=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())
